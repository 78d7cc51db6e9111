/** Cluster load over the time the page has been open: mean and p90 CPU and memory, decision rate. */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { Trend } from './live.js';

const AXIS = {
  stroke: '#8b95a7',
  grid: { stroke: 'rgba(255,255,255,0.06)', width: 1 },
  ticks: { show: false },
};

function options(width: number): uPlot.Options {
  return {
    width,
    height: 150,
    cursor: { drag: { x: false, y: false } },
    legend: { live: true },
    scales: {
      // At least a two-minute window, so the first points do not stretch over sub-second ticks.
      x: {
        time: true,
        range: (_u, min, max) => {
          const hi = Number.isFinite(max) ? max : Date.now() / 1000;
          return [Number.isFinite(min) ? Math.min(min, hi - 120) : hi - 120, hi];
        },
      },
      pct: { range: [0, 100] },
      rate: { range: (_u, _min, max) => [0, Math.max(10, max * 1.2)] },
    },
    axes: [
      { ...AXIS, space: 80 },
      { ...AXIS, scale: 'pct', values: (_u, ticks) => ticks.map((t) => `${t}%`), size: 44 },
      {
        ...AXIS,
        scale: 'rate',
        side: 1,
        grid: { show: false },
        values: (_u, ticks) => ticks.map((t) => `${t}/m`),
        size: 44,
      },
    ],
    series: [
      {},
      {
        label: 'cpu avg',
        scale: 'pct',
        stroke: '#34d3a5',
        width: 2,
        value: (_u, v) => (v == null ? '–' : `${v.toFixed(1)}%`),
      },
      {
        label: 'cpu p90',
        scale: 'pct',
        stroke: '#34d3a5',
        width: 1,
        dash: [4, 3],
        value: (_u, v) => (v == null ? '–' : `${v.toFixed(1)}%`),
      },
      {
        label: 'mem avg',
        scale: 'pct',
        stroke: '#a78bfa',
        width: 2,
        value: (_u, v) => (v == null ? '–' : `${v.toFixed(1)}%`),
      },
      {
        label: 'mem p90',
        scale: 'pct',
        stroke: '#a78bfa',
        width: 1,
        dash: [4, 3],
        value: (_u, v) => (v == null ? '–' : `${v.toFixed(1)}%`),
      },
      {
        label: 'decisions',
        scale: 'rate',
        stroke: '#f5b342',
        fill: 'rgba(245,179,66,0.12)',
        width: 1,
        paths: uPlot.paths.stepped?.({ align: 1 }),
        value: (_u, v) => (v == null ? '–' : `${Math.round(v)}/min`),
      },
    ],
  };
}

function data(t: Trend): uPlot.AlignedData {
  return [t.t, t.cpuAvg, t.cpuP90, t.memAvg, t.memP90, t.rate];
}

export function TrendChart(props: { trend: Trend }) {
  const wrap = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);

  useEffect(() => {
    const el = wrap.current;
    if (!el) return;
    const u = new uPlot(options(el.clientWidth), data(props.trend), el);
    plot.current = u;
    const ro = new ResizeObserver(() => u.setSize({ width: el.clientWidth, height: 150 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
    // Created once; data flows in through the effect below.
  }, []);

  useEffect(() => {
    plot.current?.setData(data(props.trend));
  }, [props.trend]);

  return (
    <div class="trend">
      <div ref={wrap} />
      {props.trend.t.length < 2 ? (
        <p class="trend-note dim">Collecting: a point every 2 s while this page is open.</p>
      ) : null}
    </div>
  );
}
