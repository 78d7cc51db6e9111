import { describe, expect, it } from 'vitest';
import { DAEMONSET_ANNOTATION, exemptFromLoadLimits } from './daemonset.js';

describe('exemptFromLoadLimits', () => {
  it.each<{ name: string; isDaemonSetPod: boolean; annotations: Record<string, string>; want: boolean }>([
    {
      name: 'DaemonSet pod the webhook vouched for',
      isDaemonSetPod: true,
      annotations: { [DAEMONSET_ANNOTATION]: 'true' },
      want: true,
    },
    {
      name: 'DaemonSet owner only (anyone can write it)',
      isDaemonSetPod: true,
      annotations: {},
      want: false,
    },
    {
      name: 'annotation with another value',
      isDaemonSetPod: true,
      annotations: { [DAEMONSET_ANNOTATION]: 'yes' },
      want: false,
    },
    {
      name: 'annotation but no DaemonSet owner any more',
      isDaemonSetPod: false,
      annotations: { [DAEMONSET_ANNOTATION]: 'true' },
      want: false,
    },
  ])('$name → $want', ({ isDaemonSetPod, annotations, want }) => {
    expect(exemptFromLoadLimits({ isDaemonSetPod, annotations })).toBe(want);
  });
});
