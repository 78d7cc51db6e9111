/**
 * A map of namespaced objects by "namespace/name" that also lists them per namespace: what a reader
 * needs when it asks "which of these in the pod's namespace select it" (Services, for PodTopologySpread's
 * default selector) once per scheduling cycle, without walking every namespace's.
 */
export interface ByNamespaceView<T> extends ReadonlyMap<string, T> {
  /** The objects of one namespace (live: do not mutate while iterating). */
  inNamespace(namespace: string): Iterable<T>;
}

const NONE: ReadonlyMap<string, never> = new Map<string, never>();

export class ByNamespace<T extends { namespace: string; name: string }>
  extends Map<string, T>
  implements ByNamespaceView<T>
{
  private readonly perNamespace = new Map<string, Map<string, T>>();

  // The key names the namespace, so a replacement stays in its namespace's map.
  override set(key: string, value: T): this {
    super.set(key, value);
    let names = this.perNamespace.get(value.namespace);
    if (!names) {
      names = new Map();
      this.perNamespace.set(value.namespace, names);
    }
    names.set(value.name, value);
    return this;
  }

  override delete(key: string): boolean {
    const old = this.get(key);
    if (!old) return false;
    const names = this.perNamespace.get(old.namespace);
    names?.delete(old.name);
    if (names?.size === 0) this.perNamespace.delete(old.namespace);
    return super.delete(key);
  }

  override clear(): void {
    this.perNamespace.clear();
    super.clear();
  }

  inNamespace(namespace: string): Iterable<T> {
    return (this.perNamespace.get(namespace) ?? NONE).values();
  }
}
