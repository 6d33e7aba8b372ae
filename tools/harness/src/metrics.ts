/** A value of a Prometheus metric line (the first series matching the prefix). */
export async function metricValue(url: string, series: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(series + ' ') || l.startsWith(series + '{'));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : NaN;
}

/** Every series of a Prometheus metric: its labels and value. */
export async function metricSeries(url: string, name: string): Promise<{ labels: Record<string, string>; value: number }[]> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const out: { labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    const m = /^(\w+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]));
    out.push({ labels, value: Number(m[3]) });
  }
  return out;
}
