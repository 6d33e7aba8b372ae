import { useEffect, useRef } from 'preact/hooks';
import { PALETTE } from './palette';
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Filler,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
  type ChartConfiguration,
} from 'chart.js';

// Only the parts used here are bundled (Chart.js is tree-shakable).
Chart.register(BarController, BarElement, LineController, LineElement, PointElement, CategoryScale, LinearScale, Tooltip, Legend, Filler);
Chart.defaults.font.family = getComputedStyle(document.documentElement).fontFamily;
Chart.defaults.font.size = 11.5;
Chart.defaults.color = '#6b7385';

export interface Series {
  label: string;
  data: (number | null)[];
  color?: string;
}

/**
 * One Chart.js chart. `data-total` on the figure is the sum of what is drawn (all series when
 * stacked, else the first), so a
 * reader (or a test) can check the chart against the numbers it came from.
 */
export function ChartView({
  title,
  type,
  labels,
  series,
  stacked = false,
  format,
  height = 220,
}: {
  title: string;
  type: 'bar' | 'line';
  labels: string[];
  series: Series[];
  stacked?: boolean;
  format?: (v: number) => string;
  height?: number;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart | null>(null);
  useEffect(() => {
    const config: ChartConfiguration = {
      type,
      data: {
        labels,
        datasets: series.map((s, i) => {
          const color = s.color ?? PALETTE[i % PALETTE.length]!;
          return {
            label: s.label,
            data: s.data,
            backgroundColor: type === 'bar' ? color : `${color}22`,
            borderColor: color,
            borderWidth: type === 'line' ? 2 : 0,
            pointRadius: labels.length > 40 ? 0 : 2,
            fill: false,
            spanGaps: true,
            tension: 0.2,
          };
        }),
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        interaction: { mode: 'index', intersect: false },
        plugins: {
          legend: { display: series.length > 1, position: 'bottom', labels: { boxWidth: 10 } },
          tooltip: format ? { callbacks: { label: (ctx) => `${ctx.dataset.label}: ${format(Number(ctx.raw))}` } } : {},
        },
        scales: {
          x: { stacked, grid: { display: false }, ticks: { maxRotation: 0, autoSkipPadding: 12 } },
          y: { stacked, beginAtZero: true, ticks: format ? { callback: (v) => format(Number(v)) } : {} },
        },
      },
    };
    chart.current = new Chart(canvas.current!, config);
    return () => chart.current?.destroy();
  }, [type, JSON.stringify(labels), JSON.stringify(series)]);
  const sum = (d: (number | null)[]) => d.reduce<number>((s, v) => s + (v ?? 0), 0);
  const total = stacked ? series.reduce((s, x) => s + sum(x.data), 0) : sum(series[0]?.data ?? []);
  return (
    <figure
      class="chart"
      data-chart={title}
      data-total={String(total)}
      data-points={String(series[0]?.data.length ?? 0)}
      data-labels={JSON.stringify(labels)}
    >
      <figcaption>{title}</figcaption>
      <div class="chart-box" style={{ height: `${height}px` }}>
        <canvas ref={canvas} role="img" aria-label={title} />
      </div>
    </figure>
  );
}
