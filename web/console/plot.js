import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { html } from './html.js';

// Colours with at least 3:1 contrast on white (WCAG non-text contrast), told apart by dash too.
const COLOURS = ['#0b5cad', '#b3261e', '#1b7a3d', '#8a4b00', '#6a1b9a', '#00695c', '#4e342e', '#37474f'];
const HEIGHT = 240;

/** A live uPlot line chart of `series` (name → values) over `times` (unix seconds). */
export function LinePlot({ label, times, series }) {
  const box = useRef(null);
  const chart = useRef(null);
  const names = Object.keys(series);
  const shape = names.join('|');

  useEffect(() => {
    const width = Math.max(280, box.current.clientWidth);
    const options = {
      width,
      height: HEIGHT,
      scales: { x: { time: true } },
      axes: [{}, { label: 'pushes / s', size: 60 }],
      series: [
        {},
        ...names.map((name, i) => ({
          label: name,
          stroke: COLOURS[i % COLOURS.length],
          width: 2,
          dash: name.endsWith(':failed') ? [6, 4] : undefined,
          value: (_u, v) => (v == null ? '—' : v.toFixed(2)),
        })),
      ],
    };
    chart.current = new uPlot(options, [times, ...names.map((n) => series[n])], box.current);
    const resize = () => chart.current?.setSize({ width: Math.max(280, box.current.clientWidth), height: HEIGHT });
    addEventListener('resize', resize);
    return () => {
      removeEventListener('resize', resize);
      chart.current?.destroy();
      chart.current = null;
    };
  }, [shape]);

  useEffect(() => {
    chart.current?.setData([times, ...names.map((n) => series[n])]);
  }, [times, series]);

  return html`<figure class="plot">
    <div ref=${box} role="img" aria-label=${label} data-testid="pushes-plot"></div>
    <figcaption>${label}</figcaption>
  </figure>`;
}
