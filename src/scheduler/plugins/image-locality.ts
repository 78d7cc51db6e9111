/**
 * ImageLocality (Score): favours nodes that already hold the pod's images, scaled by how widely each
 * image is spread (an image on every node says little).
 *   sum   = Σ over the pod's containers (init included) and image volumes whose image is on the node:
 *           ⌊sizeBytes × (nodesWithImage / totalNodes)⌋
 *   sum   = clamp(sum, 23 MB, 1000 MB × containers)          (image volumes do not raise the maximum)
 *   score = ⌊100 × (sum − 23 MB) / (1000 MB × containers − 23 MB)⌋
 * In integers, as upstream's int64 arithmetic. Image names without a tag or digest are compared as
 * ":latest", as the kubelet reports them.
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
      for (const image of ctx.pod.volumeImages ?? []) wanted.add(normalizedImageName(image));
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
      // Each image as often as the pod names it (two containers of one image count twice, as upstream).
      let sum = 0;
      const add = (image: string) => {
        const name = normalizedImageName(image);
        const size = sizes.get(name);
        if (size !== undefined) sum += Math.trunc(size * ((spread.get(name) ?? 0) / total));
      };
      for (const image of ctx.pod.images) add(image);
      for (const image of ctx.pod.volumeImages ?? []) add(image);
      const max = MAX_CONTAINER_THRESHOLD * ctx.pod.images.length;
      const clamped = Math.min(max, Math.max(MIN_THRESHOLD, sum));
      // Integers below 2^53 and a ratio at least 1/(max − min) away from the next integer: trunc is Go's /.
      return Math.trunc((100 * (clamped - MIN_THRESHOLD)) / (max - MIN_THRESHOLD));
    },
  };
}
