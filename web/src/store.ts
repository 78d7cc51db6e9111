/** A minimal observable store and the hook components read it with. */
import { useEffect, useRef, useState } from 'preact/hooks';

export class Store<T extends object> {
  private listeners = new Set<() => void>();

  constructor(private state: T) {}

  get(): T {
    return this.state;
  }

  set(patch: Partial<T> | ((state: T) => Partial<T>)): void {
    const next = typeof patch === 'function' ? patch(this.state) : patch;
    this.state = { ...this.state, ...next };
    for (const listener of this.listeners) listener();
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** Re-renders the component when the selected slice changes (by identity). */
export function useStore<T extends object, S>(store: Store<T>, select: (state: T) => S): S {
  const [, force] = useState(0);
  const selected = select(store.get());
  const last = useRef(selected);
  last.current = selected;
  const selectRef = useRef(select);
  selectRef.current = select;
  useEffect(
    () =>
      store.subscribe(() => {
        if (!Object.is(selectRef.current(store.get()), last.current)) force((n) => n + 1);
      }),
    [store],
  );
  return selected;
}
