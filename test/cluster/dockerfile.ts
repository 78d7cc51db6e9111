/**
 * The image's file tree without Docker: reads the Dockerfile and .dockerignore and carries out their
 * stages in temporary folders — every COPY as Docker would (context files filtered by .dockerignore,
 * `--from=<stage>` paths under the stage's WORKDIR), the npm RUN steps of the build and dependency
 * stages as written. Two departures, both about the base image rather than the project: the build
 * stage's `npm ci` (all dependencies, the same lockfile) links the checkout's installed node_modules
 * instead of installing them again, and RUN steps of the final stage (they trim the base image) are
 * skipped. Any other RUN is refused, so a Dockerfile change that this cannot mirror fails loudly.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import path from 'node:path';

export interface Instruction {
  op: string;
  /** The rest of the line, continuation lines joined. */
  args: string;
}

export interface Stage {
  /** `AS <name>`, or the stage's index as a string. */
  name: string;
  from: string;
  instructions: Instruction[];
}

/** The stages of a Dockerfile (comments and blank lines dropped, `\` continuations joined). */
export function parseDockerfile(text: string): Stage[] {
  const lines: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!pending && (line === '' || line.startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    lines.push(`${pending}${line}`.trim());
    pending = '';
  }
  const stages: Stage[] = [];
  for (const line of lines) {
    const m = /^(\S+)\s*(.*)$/.exec(line);
    if (!m) continue;
    const op = (m[1] ?? '').toUpperCase();
    const args = m[2] ?? '';
    if (op === 'FROM') {
      const [from = '', as, name] = args.split(/\s+/);
      stages.push({
        name: as?.toUpperCase() === 'AS' && name ? name : String(stages.length),
        from,
        instructions: [],
      });
    } else if (op !== 'ARG' || stages.length > 0) {
      const stage = stages.at(-1);
      if (!stage) throw new Error(`Dockerfile: ${op} before FROM`);
      stage.instructions.push({ op, args });
    }
  }
  return stages;
}

function globToRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] ?? '';
    if (pattern.startsWith('**/', i)) {
      re += '(?:.*/)?';
      i += 2;
    } else if (pattern.startsWith('**', i)) {
      re += '.*';
      i += 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/**
 * .dockerignore as Docker reads it: patterns relative to the context, `!` re-includes, the last pattern
 * matching a path or one of its parent folders decides.
 */
export function dockerIgnore(text: string): (relPath: string) => boolean {
  const patterns = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const negate = l.startsWith('!');
      const p = path.posix.normalize((negate ? l.slice(1) : l).replace(/^\/+/, '')).replace(/\/+$/, '');
      return { negate, re: globToRegExp(p) };
    });
  return (relPath) => {
    const parts = relPath.split('/');
    const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    let ignored = false;
    for (const { negate, re } of patterns) {
      if (prefixes.some((p) => re.test(p))) ignored = !negate;
    }
    return ignored;
  };
}

function sh(cmd: string, cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      'bash',
      ['-c', cmd],
      { cwd, env, timeout: 600_000, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        if (err)
          reject(new Error(`RUN ${cmd} (in ${cwd}) failed:\n${stdout.slice(-2000)}\n${stderr.slice(-4000)}`));
        else resolve();
      },
    );
  });
}

/** Copies `src` (file or folder) to `dest`, leaving out what `ignored` (paths relative to `base`) says. */
function copyFiltered(src: string, dest: string, base: string, ignored: (rel: string) => boolean): void {
  const rel = path.relative(base, src);
  if (rel && ignored(rel)) return;
  if (statSync(src).isDirectory()) {
    mkdirSync(dest, { recursive: true });
    for (const entry of readdirSync(src))
      copyFiltered(path.join(src, entry), path.join(dest, entry), base, ignored);
  } else {
    mkdirSync(path.dirname(dest), { recursive: true });
    cpSync(src, dest);
  }
}

export interface ImageTree {
  /** The final stage's WORKDIR, as a folder. */
  dir: string;
  entrypoint: string[];
  user: string | undefined;
  env: Record<string, string>;
  /** RUN steps not carried out (the final stage's, which trim the base image). */
  skipped: string[];
}

/**
 * Lays out every stage of `root`'s Dockerfile under `workDir/<stage>` and returns the final stage's
 * tree. `log` hears each step.
 */
export async function buildImageTree(
  root: string,
  workDir: string,
  log: (line: string) => void = () => {},
): Promise<ImageTree> {
  const stages = parseDockerfile(readFileSync(path.join(root, 'Dockerfile'), 'utf8'));
  const ignorePath = path.join(root, '.dockerignore');
  const ignored = existsSync(ignorePath) ? dockerIgnore(readFileSync(ignorePath, 'utf8')) : () => false;
  const stageRoots = new Map<string, string>();
  const binPath = `${path.join(root, 'node_modules/.bin')}:${process.env['PATH'] ?? ''}`;
  let result: ImageTree | undefined;

  for (const [index, stage] of stages.entries()) {
    const isFinal = index === stages.length - 1;
    const stageRoot = path.join(workDir, stage.name);
    let image = '/';
    const dir = () => path.join(stageRoot, image);
    const env: Record<string, string> = {};
    const skipped: string[] = [];
    let entrypoint: string[] = [];
    let user: string | undefined;
    mkdirSync(stageRoot, { recursive: true });
    for (const { op, args } of stage.instructions) {
      if (op === 'WORKDIR') {
        image = path.posix.resolve(image, args);
        mkdirSync(dir(), { recursive: true });
      } else if (op === 'ENV') {
        const m = /^(\S+?)[= ](.*)$/.exec(args);
        if (m?.[1]) env[m[1]] = m[2] ?? '';
      } else if (op === 'USER') user = args;
      else if (op === 'ENTRYPOINT') entrypoint = JSON.parse(args) as string[];
      else if (op === 'COPY') {
        const words = args.split(/\s+/);
        const from = words[0]?.startsWith('--from=') ? words.shift()?.slice('--from='.length) : undefined;
        const dest = words.pop() ?? '.';
        const destAbs = path.join(stageRoot, path.posix.resolve(image, dest));
        const intoDir = dest.endsWith('/') || words.length > 1;
        for (const src of words) {
          let srcPath: string;
          let base: string;
          let filter = ignored;
          if (from) {
            const otherRoot = stageRoots.get(from);
            if (!otherRoot) throw new Error(`COPY --from=${from}: no such stage before ${stage.name}`);
            srcPath = path.join(otherRoot, src);
            base = srcPath;
            filter = () => false;
          } else {
            srcPath = path.join(root, src);
            base = root;
          }
          if (!existsSync(srcPath)) throw new Error(`COPY ${src}: not found (stage ${stage.name})`);
          const target =
            statSync(srcPath).isDirectory() || !intoDir ? destAbs : path.join(destAbs, path.basename(src));
          copyFiltered(srcPath, target, base, filter);
        }
        log(`[${stage.name}] COPY ${args}`);
      } else if (op === 'RUN') {
        if (isFinal) {
          skipped.push(args);
          continue;
        }
        const steps = args.split('&&').map((s) => s.trim());
        if (steps.some((s) => !s.startsWith('npm ')))
          throw new Error(`RUN ${args}: not an npm step; mirror it here`);
        if (args === 'npm ci --no-audit --no-fund') {
          symlinkSync(path.join(root, 'node_modules'), path.join(dir(), 'node_modules'));
          log(`[${stage.name}] RUN ${args} (the checkout's node_modules, same lockfile)`);
        } else {
          log(`[${stage.name}] RUN ${args}`);
          await sh(args, dir(), { ...process.env, ...env, PATH: binPath });
        }
      }
    }
    // `--from` paths are absolute in that stage's file system, i.e. under its root folder here.
    stageRoots.set(stage.name, stageRoot);
    stageRoots.set(String(index), stageRoot);
    if (isFinal) result = { dir: dir(), entrypoint, user, env, skipped };
  }
  if (!result) throw new Error('Dockerfile has no stage');
  return result;
}
