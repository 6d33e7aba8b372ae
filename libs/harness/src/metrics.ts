/** A value of a Prometheus metric line (the first series matching the prefix). */
export async function metricValue(url: string, series: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(series + ' ') || l.startsWith(series + '{'));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : NaN;
}
