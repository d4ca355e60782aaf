import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { html, type View } from './html.js';

/** Distinct on light and dark backgrounds; series past ten reuse them (the API sends at most ten). */
const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#ca8a04', '#db2777', '#4b5563', '#65a30d'];

export interface ChartSeries {
  name: string;
  /** One value per x, `null` where there is none. */
  values: (number | null)[];
}

export interface TimeChartProps {
  title: string;
  /** Bucket starts, ms since epoch. */
  xs: number[];
  series: ChartSeries[];
  kind: 'line' | 'bars';
  /** How the y axis and the legend write a value. */
  format: (value: number) => string;
}

/**
 * A uPlot time chart: canvas, so thousands of points stay fast. A canvas says nothing to a screen
 * reader, so each chart is a figure whose caption names it and the views put the numbers in tables too.
 */
export function TimeChart({ title, xs, series, kind, format }: TimeChartProps): View {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const target = container.current;
    if (!target) return;
    const options: uPlot.Options = {
      width: Math.max(target.clientWidth, 320),
      height: 220,
      scales: { x: { time: true } },
      axes: [{}, { values: (_plot, ticks) => ticks.map(format), size: 80 }],
      series: [
        {},
        ...series.map((entry, index) => ({
          label: entry.name,
          stroke: COLORS[index % COLORS.length]!,
          width: kind === 'bars' ? 0 : 2,
          ...(kind === 'bars'
            ? {
                fill: COLORS[index % COLORS.length]! + '99',
                points: { show: false },
                paths: uPlot.paths.bars!({ size: [0.8 / Math.max(series.length, 1), 40] }),
              }
            : {}),
          value: (_plot: uPlot, value: number | null) => (value === null ? '–' : format(value)),
        })),
      ],
    };
    const data: uPlot.AlignedData = [xs.map((at) => at / 1000), ...series.map((entry) => entry.values)];
    const plot = new uPlot(options, data, target);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(target.clientWidth, 320), height: 220 }));
    resize.observe(target);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [xs, series, kind, format]);
  return html`<figure class="chart">
    <figcaption>${title}</figcaption>
    <div ref=${container} role="img" aria-label=${`${title} chart`}></div>
  </figure>`;
}
