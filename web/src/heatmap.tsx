/**
 * The node heat map: one canvas cell per node, coloured by load ÷ threshold. Cells shrink with the
 * node count (72 px tiles with names and figures for a handful of nodes, 8 px cells for thousands) so
 * the whole fleet stays on one screen; hovering shows the numbers, clicking pins the node.
 */
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { formatAge, formatPercent } from './format.js';
import { GAP, heatLayout, LABEL_CELL } from './heat-layout.js';
import { heatColour, type Metric, nodeState, pressure, sourceLabel, type Thresholds } from './model.js';
import type { NodeView } from './operations.js';
import type { Mark } from './ui-state.js';

/** From this size a tile also draws a bar per resource with the threshold tick. */
const BAR_CELL = 84;

const MARK_COLOURS: Record<Mark, string> = {
  gain: '#4ade80',
  lose: '#ff5d6c',
  chosen: '#67e8f9',
  feasible: '#a5b4fc',
};

export interface HeatmapProps {
  nodes: NodeView[];
  /** The node's thresholds, or undefined when it is outside the rule in focus (drawn dimmed). */
  thresholdsOf: (node: string) => Thresholds | undefined;
  metric: Metric;
  marks: Map<string, Mark>;
  selected: string | null;
  onSelect: (node: string | null) => void;
  now: number;
  maxHeight?: number;
}

function truncate(ctx: CanvasRenderingContext2D, text: string, width: number): string {
  if (ctx.measureText(text).width <= width) return text;
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (ctx.measureText(`…${text.slice(text.length - mid)}`).width <= width) lo = mid;
    else hi = mid - 1;
  }
  // Node names differ at the end (pool-a-17): keep the tail.
  return `…${text.slice(text.length - lo)}`;
}

/** Name and figures inside a tile; big tiles also get a bar per resource with the threshold tick. */
function drawLabels(
  ctx: CanvasRenderingContext2D,
  node: NodeView,
  t: Thresholds | undefined,
  x: number,
  y: number,
  cell: number,
  dark: boolean,
  notReady: boolean,
): void {
  const ink = dark ? 'rgba(10,14,20,0.92)' : 'rgba(240,244,250,0.95)';
  ctx.fillStyle = ink;
  ctx.font = '600 11px ui-sans-serif, system-ui, sans-serif';
  ctx.textBaseline = 'top';
  ctx.fillText(truncate(ctx, node.name, cell - 10), x + 6, y + 6);
  ctx.font = '10px ui-monospace, SFMono-Regular, Menlo, monospace';
  const load = node.load;
  if (!load || load.unavailable) {
    ctx.fillText(notReady ? 'NotReady' : 'no load', x + 6, y + cell - 16);
    return;
  }
  const rows: [string, number, number | undefined][] = [
    ['cpu', load.cpuPercent, t?.cpu],
    ['mem', load.memoryPercent, t?.memory],
  ];
  rows.forEach(([label, value, threshold], i) => {
    const rowY = y + cell - (rows.length - i) * (cell >= BAR_CELL ? 17 : 12) - 4;
    const text = `${label} ${formatPercent(value)}`;
    ctx.fillStyle = ink;
    ctx.fillText(text, x + 6, rowY);
    if (cell < BAR_CELL) return;
    const barX = x + 6;
    const barW = cell - 12;
    const barY = rowY + 11;
    ctx.fillStyle = dark ? 'rgba(0,0,0,0.28)' : 'rgba(0,0,0,0.35)';
    ctx.fillRect(barX, barY, barW, 3);
    ctx.fillStyle = dark ? 'rgba(10,14,20,0.85)' : 'rgba(255,255,255,0.85)';
    ctx.fillRect(barX, barY, (barW * Math.min(100, Math.max(0, value))) / 100, 3);
    if (threshold !== undefined && threshold < 100) {
      ctx.fillStyle = dark ? '#0a0e14' : '#ffffff';
      ctx.fillRect(barX + (barW * threshold) / 100 - 1, barY - 2, 2, 7);
    }
  });
}

export function Heatmap(props: HeatmapProps) {
  const wrap = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const [width, setWidth] = useState(0);
  const [hover, setHover] = useState<{ index: number; x: number; y: number } | null>(null);

  useLayoutEffect(() => {
    const el = wrap.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setWidth(el.clientWidth));
    ro.observe(el);
    setWidth(el.clientWidth);
    return () => ro.disconnect();
  }, []);

  const layout = useMemo(
    () => heatLayout(props.nodes.length, width, props.maxHeight ?? 320),
    [props.nodes.length, width, props.maxHeight],
  );

  useEffect(() => {
    const c = canvas.current;
    if (!c || width === 0) return;
    const dpr = window.devicePixelRatio || 1;
    const h = Math.max(layout.height, 1);
    c.width = Math.round(width * dpr);
    c.height = Math.round(h * dpr);
    c.style.width = `${width}px`;
    c.style.height = `${h}px`;
    const ctx = c.getContext('2d');
    if (!ctx) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, h);
    const { cell, cols } = layout;
    const labelled = cell >= LABEL_CELL;
    const radius = cell >= 20 ? 4 : cell >= 12 ? 2 : 1;
    props.nodes.forEach((node, i) => {
      const x = (i % cols) * (cell + GAP);
      const y = Math.floor(i / cols) * (cell + GAP);
      const t = props.thresholdsOf(node.name);
      const state = nodeState(node);
      ctx.globalAlpha = t ? 1 : 0.22;
      const load = node.load;
      const p = load && !load.unavailable && t ? pressure(load, t, props.metric) : undefined;
      ctx.fillStyle =
        state === 'notReady'
          ? '#3b1d25'
          : p === undefined
            ? load && !load.unavailable
              ? '#2b3442'
              : '#262b36'
            : heatColour(p);
      ctx.beginPath();
      ctx.roundRect(x, y, cell, cell, radius);
      ctx.fill();
      if (state === 'unknown' || state === 'notReady') {
        // Hatched: no trustworthy figure for this node.
        ctx.save();
        ctx.clip();
        ctx.strokeStyle = state === 'notReady' ? 'rgba(255,93,108,0.55)' : 'rgba(255,255,255,0.14)';
        ctx.lineWidth = 1;
        for (let k = -cell; k < cell; k += Math.max(4, cell / 4)) {
          ctx.beginPath();
          ctx.moveTo(x + k, y + cell);
          ctx.lineTo(x + k + cell, y);
          ctx.stroke();
        }
        ctx.restore();
      }
      if (load?.stale && cell >= 10) {
        const s = Math.max(4, cell / 4);
        ctx.fillStyle = 'rgba(240,240,255,0.85)';
        ctx.beginPath();
        ctx.moveTo(x + cell - s, y);
        ctx.lineTo(x + cell, y);
        ctx.lineTo(x + cell, y + s);
        ctx.fill();
      }
      if (state === 'cordoned') {
        ctx.fillStyle = 'rgba(10,12,16,0.75)';
        ctx.fillRect(x, y + cell - Math.max(2, cell / 8), cell, Math.max(2, cell / 8));
      }
      if (labelled) {
        const dark = p !== undefined && p > 0.7 && p <= 1;
        drawLabels(ctx, node, t, x, y, cell, dark, state === 'notReady');
      }
      ctx.globalAlpha = 1;
      const mark = props.marks.get(node.name);
      const outline = node.name === props.selected ? '#ffffff' : mark ? MARK_COLOURS[mark] : undefined;
      if (outline) {
        ctx.strokeStyle = outline;
        ctx.lineWidth = cell >= 12 ? 2 : 1.5;
        ctx.setLineDash(mark === 'lose' && node.name !== props.selected ? [3, 2] : []);
        ctx.beginPath();
        ctx.roundRect(x + 1, y + 1, cell - 2, cell - 2, radius);
        ctx.stroke();
        ctx.setLineDash([]);
      }
    });
  }, [props.nodes, props.thresholdsOf, props.metric, props.marks, props.selected, layout, width]);

  const indexAt = (ev: MouseEvent): number | undefined => {
    const rect = (ev.currentTarget as HTMLCanvasElement).getBoundingClientRect();
    const x = ev.clientX - rect.left;
    const y = ev.clientY - rect.top;
    const col = Math.floor(x / (layout.cell + GAP));
    const row = Math.floor(y / (layout.cell + GAP));
    if (col >= layout.cols || x - col * (layout.cell + GAP) > layout.cell) return undefined;
    if (y - row * (layout.cell + GAP) > layout.cell) return undefined;
    const i = row * layout.cols + col;
    return i < props.nodes.length ? i : undefined;
  };

  const hovered = hover ? props.nodes[hover.index] : undefined;
  return (
    <div class="heatmap" ref={wrap}>
      <canvas
        ref={canvas}
        role="img"
        aria-label={`Heat map of ${props.nodes.length} nodes`}
        data-testid="heatmap"
        data-nodes={props.nodes.length}
        onMouseMove={(ev) => {
          const index = indexAt(ev);
          const rect = (ev.currentTarget as HTMLCanvasElement).getBoundingClientRect();
          setHover(
            index === undefined ? null : { index, x: ev.clientX - rect.left, y: ev.clientY - rect.top },
          );
        }}
        onMouseLeave={() => setHover(null)}
        onClick={(ev) => {
          const index = indexAt(ev);
          const node = index === undefined ? undefined : props.nodes[index];
          props.onSelect(node && node.name !== props.selected ? node.name : null);
        }}
      />
      {hovered && hover ? (
        <NodeTooltip
          node={hovered}
          t={props.thresholdsOf(hovered.name)}
          x={hover.x}
          y={hover.y}
          width={width}
          now={props.now}
        />
      ) : null}
    </div>
  );
}

function NodeTooltip(props: {
  node: NodeView;
  t: Thresholds | undefined;
  x: number;
  y: number;
  width: number;
  now: number;
}) {
  const { node, t } = props;
  const load = node.load;
  const left = props.x > props.width - 260 ? props.x - 250 : props.x + 14;
  return (
    <div class="tooltip" style={{ left: `${left}px`, top: `${props.y + 14}px` }}>
      <strong>{node.name}</strong>
      {!node.ready ? (
        <span class="bad-text"> NotReady</span>
      ) : !node.schedulable ? (
        <span class="warn-text"> cordoned</span>
      ) : null}
      {load && !load.unavailable ? (
        <table>
          <tbody>
            <tr>
              <th>cpu</th>
              <td>{formatPercent(load.cpuPercent)}</td>
              <td class="dim">{t ? `max ${t.cpu}%${t.cpuRule ? ` · ${t.cpuRule}` : ''}` : 'outside rule'}</td>
            </tr>
            <tr>
              <th>mem</th>
              <td>{formatPercent(load.memoryPercent)}</td>
              <td class="dim">
                {t ? `max ${t.memory}%${t.memoryRule ? ` · ${t.memoryRule}` : ''}` : 'outside rule'}
              </td>
            </tr>
            <tr>
              <th>from</th>
              <td colSpan={2}>
                {sourceLabel(load)} · {formatAge(load.timestamp, props.now)} ago{load.stale ? ' · stale' : ''}
              </td>
            </tr>
            <tr>
              <th>pods</th>
              <td colSpan={2}>
                {load.podCount} / {node.allocatable.pods}
              </td>
            </tr>
          </tbody>
        </table>
      ) : (
        <p class="dim">No load figure{load?.unavailable ? ' (metrics stale, fail-closed)' : ''}.</p>
      )}
    </div>
  );
}
