/** A binary min-heap by `less`; small and allocation-free on push/pop beyond the backing array. */
export class Heap<T> {
  private readonly items: T[] = [];

  constructor(private readonly less: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const items = this.items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(items[i] as T, items[parent] as T)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      this.siftDown(0);
    }
    return top;
  }

  clear(): void {
    this.items.length = 0;
  }

  private siftDown(start: number): void {
    const items = this.items;
    const n = items.length;
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let best = i;
      if (left < n && this.less(items[left] as T, items[best] as T)) best = left;
      if (right < n && this.less(items[right] as T, items[best] as T)) best = right;
      if (best === i) return;
      this.swap(i, best);
      i = best;
    }
  }

  private swap(a: number, b: number): void {
    const items = this.items;
    const t = items[a] as T;
    items[a] = items[b] as T;
    items[b] = t;
  }
}
