import { describe, expect, it } from 'vitest';
import type { NodeInfo } from '../../cluster/model.js';
import { imageLocality, normalizedImageName } from './image-locality.js';
import { type Json, scoresOf, specNode, specPod } from './plugin.testing.js';

const MB = 1024 * 1024;
const withImages = (name: string, images: [string, number][]): NodeInfo =>
  specNode(name, { images: images.map(([n, mb]) => ({ names: [n], sizeBytes: mb * MB })) });
const using = (images: string[], init: string[] = []) =>
  specPod('p', {
    containers: images.map((image, i) => ({ name: `c${i}`, image })),
    ...(init.length ? { initContainers: init.map((image, i) => ({ name: `i${i}`, image })) } : {}),
  });
/** ⌊100 × (clamp(sum, 23 MB, 1000 MB × containers) − 23 MB) / (1000 MB × containers − 23 MB)⌋, sum in MB. */
const expected = (sumMb: number, containers = 1) => {
  const max = 1000 * containers;
  return Math.trunc((100 * (Math.min(max, Math.max(23, sumMb)) - 23)) / (max - 23));
};

describe('normalizedImageName', () => {
  it.each([
    ['nginx', 'nginx:latest'],
    ['nginx:1.27', 'nginx:1.27'],
    ['gcr.io/project/app', 'gcr.io/project/app:latest'],
    ['registry.local:5000/app', 'registry.local:5000/app:latest'],
    ['registry.local:5000/app:v2', 'registry.local:5000/app:v2'],
    ['repo/app@sha256:0123abcd', 'repo/app@sha256:0123abcd'],
  ])('%s → %s', (name, want) => {
    expect(normalizedImageName(name)).toBe(want);
  });
});

describe('ImageLocality', () => {
  it.each<{ name: string; nodes: NodeInfo[]; pod: Json; want: Record<string, number | undefined> }>([
    {
      name: 'size × (nodes with the image / all nodes), scaled between the thresholds',
      nodes: [withImages('a', [['app:v1', 500]]), withImages('b', [['app:v1', 500]]), withImages('c', [])],
      pod: using(['app:v1']),
      want: { a: expected((500 * 2) / 3), b: expected((500 * 2) / 3), c: 0 },
    },
    {
      name: 'an image on every node counts in full',
      nodes: [withImages('a', [['app:v1', 500]]), withImages('b', [['app:v1', 500]])],
      pod: using(['app:v1']),
      want: { a: expected(500), b: expected(500) },
    },
    {
      name: 'below 23 MB scores 0',
      nodes: [withImages('a', [['tiny:1', 10]])],
      pod: using(['tiny:1']),
      want: { a: 0 },
    },
    {
      name: 'above 1000 MB per container scores 100',
      nodes: [withImages('a', [['huge:1', 2000]])],
      pod: using(['huge:1']),
      want: { a: 100 },
    },
    {
      name: 'the maximum grows with the number of containers',
      nodes: [withImages('a', [['huge:1', 1500]])],
      pod: using(['huge:1', 'other:1']),
      want: { a: expected(1500, 2) },
    },
    {
      name: 'images of several containers add up',
      nodes: [
        withImages('a', [
          ['x:1', 300],
          ['y:1', 400],
        ]),
        withImages('b', [['x:1', 300]]),
      ],
      pod: using(['x:1', 'y:1']),
      want: { a: expected(300 + 400 / 2, 2), b: expected(300, 2) },
    },
    {
      name: 'init container images count',
      nodes: [withImages('a', [['init:1', 500]]), withImages('b', [])],
      pod: using(['main:1'], ['init:1']),
      want: { a: expected(500 / 2, 2), b: 0 },
    },
    {
      name: 'an untagged pod image matches the node’s :latest',
      nodes: [withImages('a', [['nginx:latest', 200]])],
      pod: using(['nginx']),
      want: { a: expected(200) },
    },
    {
      name: 'a different tag does not match',
      nodes: [withImages('a', [['nginx:1.27', 200]]), withImages('b', [['nginx:latest', 200]])],
      pod: using(['nginx:1.26']),
      want: { a: undefined, b: undefined },
    },
    {
      name: 'no node holds any of the images: PreScore skips',
      nodes: [withImages('a', [['other:1', 200]])],
      pod: using(['app:v1']),
      want: { a: undefined },
    },
    {
      name: 'a pod without images is skipped',
      nodes: [withImages('a', [['app:v1', 200]])],
      pod: specPod('p'),
      want: { a: undefined },
    },
  ])('$name', ({ nodes, pod, want }) => {
    const scores = scoresOf(imageLocality(), pod, { nodes });
    expect(Object.keys(scores).sort()).toEqual(Object.keys(want).sort());
    for (const [n, s] of Object.entries(want)) {
      if (s === undefined) expect(scores[n]).toBeUndefined();
      else expect(scores[n]).toBe(s);
    }
  });

  it('matches any of an image’s names (tag and digest)', () => {
    const n = specNode('a', {
      images: [{ names: ['repo/app@sha256:beef', 'repo/app:v3'], sizeBytes: 600 * MB }],
    });
    expect(scoresOf(imageLocality(), using(['repo/app@sha256:beef']), { nodes: [n] })['a']).toBe(
      expected(600),
    );
    expect(scoresOf(imageLocality(), using(['repo/app:v3']), { nodes: [n] })['a']).toBe(expected(600));
  });

  it('scores in integers, as upstream: 500 MB on 2 of 3 nodes is ⌊100 × (333.3 − 23) / 977⌋ = 31, not 31.76', () => {
    const nodes = [
      withImages('a', [['app:v1', 500]]),
      withImages('b', [['app:v1', 500]]),
      withImages('c', []),
    ];
    expect(scoresOf(imageLocality(), using(['app:v1']), { nodes })).toEqual({ a: 31, b: 31, c: 0 });
  });

  it('counts an image volume’s image too, without raising the maximum (containers only)', () => {
    const nodes = [withImages('a', [['models/llm:v1', 600]]), withImages('b', [])];
    const pod = specPod('p', {
      containers: [{ name: 'c', image: 'main:1' }],
      volumes: [{ name: 'weights', image: { reference: 'models/llm:v1' } }],
    });
    // 600 MB on 1 of 2 nodes → 300 MB, against one container's 1000 MB.
    expect(scoresOf(imageLocality(), pod, { nodes })).toEqual({ a: expected(300), b: 0 });
  });

  it('counts an image as often as the pod names it (two containers of one image: twice)', () => {
    const nodes = [withImages('a', [['x:1', 300]])];
    expect(scoresOf(imageLocality(), using(['x:1', 'x:1']), { nodes })).toEqual({ a: expected(600, 2) });
  });
});
