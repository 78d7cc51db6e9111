/**
 * ImageLocality (Score): favours nodes that already hold the pod's images, scaled by how widely each
 * image is spread (a image on every node says little).
 *   sum   = Σ over the pod's containers whose image is on the node: sizeBytes × nodesWithImage / totalNodes
 *   sum   = clamp(sum, 23 MB, 1000 MB × containers)
 *   score = 100 × (sum − 23 MB) / (1000 MB × containers − 23 MB)
 * Image names without a tag or digest are compared as ":latest", as the kubelet reports them.
 */
import type { PreScorePlugin, ScorePlugin } from '../framework/types.js';
import { PLUGIN } from './names.js';

const MB = 1024 * 1024;
const MIN_THRESHOLD = 23 * MB;
const MAX_CONTAINER_THRESHOLD = 1000 * MB;
const STATE = 'ImageLocality/spread';

/** "nginx" → "nginx:latest"; names with a tag or digest stay. */
export function normalizedImageName(name: string): string {
  const lastSlash = name.lastIndexOf('/');
  const tail = name.slice(lastSlash + 1);
  return tail.includes(':') || tail.includes('@') ? name : `${name}:latest`;
}

export function imageLocality(): PreScorePlugin & ScorePlugin {
  return {
    name: PLUGIN.ImageLocality,
    preScore(state, ctx) {
      const wanted = new Set(ctx.pod.images.map(normalizedImageName));
      if (wanted.size === 0) return 'skip';
      // The snapshot keeps each image's node count as nodes change: no pass over every node per pod.
      const spread = new Map<string, number>();
      for (const name of wanted) {
        const count = ctx.snapshot.nodesWithImage(name);
        if (count > 0) spread.set(name, count);
      }
      if (spread.size === 0) return 'skip';
      state.write(STATE, spread);
      return undefined;
    },
    score(state, ctx, n) {
      const spread = state.read<Map<string, number>>(STATE);
      const node = n.node;
      if (!spread || !node) return 0;
      const total = ctx.snapshot.size || 1;
      const sizes = new Map<string, number>();
      for (const img of node.images) for (const name of img.names) sizes.set(name, img.sizeBytes);
      let sum = 0;
      for (const image of ctx.pod.images) {
        const name = normalizedImageName(image);
        const size = sizes.get(name);
        if (size !== undefined) sum += (size * (spread.get(name) ?? 0)) / total;
      }
      const max = MAX_CONTAINER_THRESHOLD * ctx.pod.images.length;
      const clamped = Math.min(max, Math.max(MIN_THRESHOLD, sum));
      return (100 * (clamped - MIN_THRESHOLD)) / (max - MIN_THRESHOLD);
    },
  };
}
