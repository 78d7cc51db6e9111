/**
 * PrioritySort (QueueSort): higher spec.priority first; equal priorities in the order they entered the
 * active queue.   less(a, b) = a.priority > b.priority || (a.priority == b.priority && a.enqueuedAt < b.enqueuedAt)
 */
import type { QueueSortPlugin } from '../framework/types.js';
import { PLUGIN } from './names.js';

export function prioritySort(): QueueSortPlugin {
  return {
    name: PLUGIN.PrioritySort,
    less: (a, b) =>
      a.pod.priority !== b.pod.priority ? a.pod.priority > b.pod.priority : a.enqueuedAt < b.enqueuedAt,
  };
}
