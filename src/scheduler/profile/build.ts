/**
 * A Profile from a profile configuration: the default plugins (multiPoint), minus what is disabled
 * ("*" = every default), plus what is enabled, per extension point; each plugin built once with its
 * pluginConfig args and placed at every extension point it implements.
 */
import type { Profile } from '../framework/runtime.js';
import type { AnyPlugin } from '../framework/types.js';
import { PLUGIN } from '../plugins/names.js';
import type { ExtensionPoint, PluginSet, ProfileConfig } from './config.js';
import { DEFAULT_PLUGINS, PLUGIN_FACTORIES, type PluginDeps } from './registry.js';

const IMPLEMENTS: Record<Exclude<ExtensionPoint, 'bind' | 'queueSort'>, keyof AnyPlugin> = {
  preEnqueue: 'preEnqueue',
  preFilter: 'preFilter',
  filter: 'filter',
  postFilter: 'postFilter',
  preScore: 'preScore',
  score: 'score',
  reserve: 'reserve',
  permit: 'permit',
  preBind: 'preBind',
  postBind: 'postBind',
};

interface Entry {
  name: string;
  weight?: number;
}

function apply(list: Entry[], set: PluginSet | undefined): Entry[] {
  if (!set) return list;
  const disabled = new Set((set.disabled ?? []).map((d) => d.name));
  let out = disabled.has('*') ? [] : list.filter((e) => !disabled.has(e.name));
  for (const e of set.enabled ?? []) {
    const known = out.find((x) => x.name === e.name);
    if (known) {
      // Re-enabling a default plugin moves nothing; it may change its weight.
      out = out.map((x) =>
        x.name === e.name
          ? {
              name: e.name,
              ...(e.weight !== undefined
                ? { weight: e.weight }
                : x.weight !== undefined
                  ? { weight: x.weight }
                  : {}),
            }
          : x,
      );
    } else out.push({ name: e.name, ...(e.weight !== undefined ? { weight: e.weight } : {}) });
  }
  return out;
}

export function buildProfile(
  schedulerName: string,
  config: ProfileConfig | undefined,
  deps: PluginDeps,
): Profile {
  const multi = apply([...DEFAULT_PLUGINS], config?.plugins?.multiPoint);
  const argsOf = new Map((config?.pluginConfig ?? []).map((c) => [c.name, c.args]));
  const built = new Map<string, AnyPlugin>();
  const instance = (name: string): AnyPlugin => {
    let p = built.get(name);
    if (!p) {
      const factory = PLUGIN_FACTORIES[name];
      if (!factory)
        throw new Error(
          `unknown scheduler plugin "${name}" (known: ${Object.keys(PLUGIN_FACTORIES).join(', ')})`,
        );
      p = factory(argsOf.get(name) ?? {}, deps);
      built.set(name, p);
    }
    return p;
  };
  for (const name of argsOf.keys()) {
    if (!PLUGIN_FACTORIES[name]) throw new Error(`pluginConfig names unknown plugin "${name}"`);
  }
  const at = (point: keyof typeof IMPLEMENTS): Entry[] =>
    apply(
      multi.filter((e) => typeof instance(e.name)[IMPLEMENTS[point]] === 'function'),
      config?.plugins?.[point],
    ).filter((e) => {
      if (typeof instance(e.name)[IMPLEMENTS[point]] === 'function') return true;
      throw new Error(`plugin ${e.name} does not implement ${point}`);
    });
  // biome-ignore lint/suspicious/noExplicitAny: each list is narrowed by the method check above.
  const plugins = (point: keyof typeof IMPLEMENTS): any[] => at(point).map((e) => instance(e.name));
  return {
    schedulerName,
    ...(config?.percentageOfNodesToScore !== undefined
      ? { percentageOfNodesToScore: config.percentageOfNodesToScore }
      : {}),
    preEnqueue: plugins('preEnqueue'),
    preFilter: plugins('preFilter'),
    filter: plugins('filter'),
    postFilter: plugins('postFilter'),
    preScore: plugins('preScore'),
    // biome-ignore lint/suspicious/noExplicitAny: narrowed by the method check in at().
    score: at('score').map((e) => ({ plugin: instance(e.name) as any, weight: e.weight ?? 1 })),
    reserve: plugins('reserve'),
    permit: plugins('permit'),
    preBind: plugins('preBind'),
    postBind: plugins('postBind'),
  };
}

/** nodeload's own plugins: what the extender runs after kube-scheduler has run upstream's. */
const EXTENDER_PLUGINS: readonly string[] = [PLUGIN.NodeLoadRules, PLUGIN.BurstGuard, PLUGIN.LoadAware];

/**
 * The profile the extender front door runs: NodeLoadRules and BurstGuard (Filter) and LoadAware
 * (Score) only, with their args from the gateway's profile (LoadAware's weights) if it gives any.
 */
export function extenderProfileConfig(config: ProfileConfig | undefined): ProfileConfig {
  return {
    plugins: {
      multiPoint: { disabled: [{ name: '*' }], enabled: EXTENDER_PLUGINS.map((name) => ({ name })) },
    },
    pluginConfig: (config?.pluginConfig ?? []).filter((c) => EXTENDER_PLUGINS.includes(c.name)),
  };
}
