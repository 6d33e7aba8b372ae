/** Series colours of the charts (apart from chart.tsx, so views can name them without loading Chart.js). */
export const PALETTE = ['#2f5bea', '#c62f3a', '#1f8a4c', '#b7791f', '#7a3e9d', '#0e7490', '#be185d', '#4d7c0f'];
