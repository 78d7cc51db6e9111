/**
 * The scheduler's profile as a file in KubeSchedulerConfiguration's shape (kubescheduler.config.k8s.io/v1),
 * for the parts that apply to nodeload: which plugins run at which extension points (multiPoint and
 * per-point enabled/disabled, "*" disables all defaults), Score weights, and plugin args (pluginConfig).
 * Fields nodeload does not use (clientConnection, leaderElection, extenders, …) are accepted and ignored.
 */
import { readFileSync } from 'node:fs';
import { load as loadYaml } from 'js-yaml';
import { z } from 'zod';

const pluginRef = z.object({ name: z.string().min(1), weight: z.number().int().min(0).optional() });
const pluginSet = z
  .object({ enabled: z.array(pluginRef).default([]), disabled: z.array(pluginRef).default([]) })
  .partial()
  .optional();

export const EXTENSION_POINTS = [
  'preEnqueue',
  'queueSort',
  'preFilter',
  'filter',
  'postFilter',
  'preScore',
  'score',
  'reserve',
  'permit',
  'preBind',
  'bind',
  'postBind',
] as const;
export type ExtensionPoint = (typeof EXTENSION_POINTS)[number];

const plugins = z
  .object({
    multiPoint: pluginSet,
    preEnqueue: pluginSet,
    queueSort: pluginSet,
    preFilter: pluginSet,
    filter: pluginSet,
    postFilter: pluginSet,
    preScore: pluginSet,
    score: pluginSet,
    reserve: pluginSet,
    permit: pluginSet,
    preBind: pluginSet,
    bind: pluginSet,
    postBind: pluginSet,
  })
  .partial();

/** kube-scheduler's percentageOfNodesToScore: 0 adaptive, 1–100 a fixed share (framework/sampling.ts). */
const percentage = z.number().int().min(0).max(100).optional();

const profileSchema = z.object({
  schedulerName: z.string().min(1).optional(),
  percentageOfNodesToScore: percentage,
  plugins: plugins.optional(),
  pluginConfig: z
    .array(z.object({ name: z.string().min(1), args: z.record(z.string(), z.unknown()).default({}) }))
    .default([]),
});

export const schedulerConfigSchema = z.object({
  apiVersion: z.literal('kubescheduler.config.k8s.io/v1'),
  kind: z.literal('KubeSchedulerConfiguration'),
  percentageOfNodesToScore: percentage,
  profiles: z.array(profileSchema).min(1),
});

export type PluginRef = z.infer<typeof pluginRef>;
export type PluginSet = { enabled?: PluginRef[]; disabled?: PluginRef[] };
export type ProfileConfig = z.infer<typeof profileSchema>;
export type SchedulerConfig = z.infer<typeof schedulerConfigSchema>;

/** Parses and validates a configuration document; the error names the offending field. */
export function parseSchedulerConfig(text: string): SchedulerConfig {
  const doc = loadYaml(text);
  const r = schedulerConfigSchema.safeParse(doc);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new Error(
      `invalid KubeSchedulerConfiguration: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return r.data;
}

/**
 * The profile for `schedulerName` from a file (the first profile when none names it), with the file's
 * percentageOfNodesToScore when the profile sets none (a profile's own wins, as upstream).
 */
export function loadProfileConfig(file: string, schedulerName: string): ProfileConfig {
  const config = parseSchedulerConfig(readFileSync(file, 'utf8'));
  const profile =
    config.profiles.find((p) => p.schedulerName === schedulerName) ?? (config.profiles[0] as ProfileConfig);
  const pct = profile.percentageOfNodesToScore ?? config.percentageOfNodesToScore;
  return pct === undefined ? profile : { ...profile, percentageOfNodesToScore: pct };
}
