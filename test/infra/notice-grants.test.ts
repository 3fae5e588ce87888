/**
 * The grants notices need on AWS. Raising a notice (`lib/people/notices/raise-notice.ts`) stores it with conditional
 * writes on the records table, then publishes `notice.raised` on the Flywheel bus, which `OnNoticeRaised` sends to the
 * alarm topic: a publish that is denied is only logged, and the alarm topic never hears. So every Lambda function that
 * can raise a notice may write the records table and put events on the bus; one that only resolves a notice
 * (`resolveOpenNotice`) or records a heartbeat (`recordHeartbeat`) may write the records table.
 *
 * The list below names each such function and what it raises. For the functions outside the route table, their
 * imports keep the list honest: an entry under `functions/` whose imports reach the notices or the heartbeats must be
 * listed (or say why it never calls them). The API functions dispatch on the whole route table, so they are listed by
 * the routes that raise.
 */
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../lib/api/routes.ts';
import { PROJECT_ROOT } from '../../lib/constructs/flywheel-function.ts';
import { STATEFUL_LOGICAL_IDS } from '../../lib/stacks/data-stack.ts';
import { synthFlywheel, type SynthesizedStage } from './synth-flywheel.ts';

interface NoticeFunction {
  /** What it raises, resolves or beats, and from where. */
  why: string;
  /** Raises notices: `notice.raised` on the bus. */
  raises: boolean;
  /** Records heartbeats, and ends a watch (deletes it) when the run finishes. */
  endsWatches?: boolean;
}

const NOTICE_FUNCTIONS: Record<string, NoticeFunction> = {
  'sweeps/check-saturation': { raises: true, why: 'a saturated suite (decision, alert)' },
  'sweeps/notify': { raises: true, endsWatches: true, why: "the sweep's end (a failure notice when shards failed); ends the sweep's watch" },
  'sweeps/plan-shards': { raises: false, why: "the sweep's first heartbeat (starts its watch)" },
  'sweeps/aggregate-shard': { raises: false, why: "the sweep's heartbeat after each shard" },
  'sweeps/record-shard-failure': { raises: false, why: "the sweep's heartbeat after each shard" },
  'training/train-step': { raises: true, why: 'a run succeeded or failed; resolves its stall notice' },
  'training/stall-check': { raises: true, why: 'a stalled or orphaned run; resolves the stall when beats resume' },
  'judges/derive-step': { raises: true, endsWatches: true, why: "a derivation's outcome; the derivation's heartbeats" },
  'judges/api': { raises: true, why: 'a drift demotion (POST /v1/annotations/{id}/labels, POST /v1/judges/{name}/drift-check)' },
  'modes/query': { raises: true, why: 'an eval draft to approve (POST /v1/eval-drafts)' },
  'experiments/api': { raises: true, why: 'a decision (POST /v1/experiments/{id}/decide) and its stopped notice resolved' },
  'experiments/schedule': { raises: true, why: 'an arm stopped, a ramp widened, an experiment stopped' },
  'experiments/proposals': { raises: true, why: 'an experiment drafted from a training run (decision)' },
  'compute/job-events': { raises: true, why: 'a compute budget crossed' },
  'people/api': { raises: true, why: "answering a decision runs its operation (deciding an experiment tells people)" },
  'people/slack-worker': { raises: true, why: 'the same operations, from a Slack button or command' },
  'people/notices-schedule': { raises: true, why: 'stalled runs; notices that waited out quiet hours' },
  'registry/api': { raises: false, why: 'retiring a suite resolves its saturation notice (POST /v1/suites/{id}/retire)' },
};

/** Entries whose imports reach the notices but never call them, and why. */
const IMPORTS_ONLY: Record<string, string> = {
  'judges/derive-trigger': 'imports derive-steps.ts for the derivation id only; starts an execution (workflows port), nothing else',
  // The sweep steps share one set of handlers (lib/sweeps/sweep-step-handlers.ts); these two neither beat nor raise.
  'sweeps/validate-sweep': 'validates the request: no heartbeat, no notice',
  'sweeps/compare-incumbent': 'compares with the incumbent: no heartbeat, no notice (notify tells of regressions)',
};

/** The modules whose use makes a function a notice function. */
const NOTICE_MODULES = ['lib/people/notices/raise-notice.ts', 'lib/people/notices/notice-store.ts', 'lib/people/heartbeats/record-heartbeat.ts'];

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
}
type Template = { Resources: Record<string, { Type: string; Properties: Record<string, any> }> };

let dev: SynthesizedStage;
let templates: Template[];
beforeAll(() => {
  dev = synthFlywheel('dev');
  templates = dev.templatePaths.map((p) => JSON.parse(readFileSync(p, 'utf8')) as Template);
}, 180_000);
afterAll(() => rmSync(dev.outdir, { recursive: true, force: true }));

/** The unconditional Allow statements of the execution role of `lambda` (`FlywheelFunction`'s role description). */
function allowedStatements(lambda: string): Statement[] {
  const found = templates.flatMap((t) =>
    Object.entries(t.Resources)
      .filter(([, r]) => r.Type === 'AWS::IAM::Role' && r.Properties.Description === `Execution role of ${lambda} (dev)`)
      .map(([roleId]) => ({ t, roleId })),
  );
  expect(found, lambda).toHaveLength(1);
  const { t, roleId } = found[0]!;
  return Object.values(t.Resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties.Roles).includes(`"${roleId}"`))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[])
    .filter((s) => s.Effect === 'Allow' && s.Condition === undefined);
}

/** The actions the statements allow on a resource whose reference names `logicalId` (same stack or another's export). */
function actionsOn(statements: Statement[], logicalId: string, options: { exclude?: RegExp } = {}): string[] {
  const names = (resource: unknown) => {
    const text = JSON.stringify(resource);
    return text.includes(logicalId) && !(options.exclude?.test(text) ?? false);
  };
  return statements.filter((s) => [s.Resource].flat().some(names)).flatMap((s) => [s.Action].flat());
}

function busLogicalId(): string {
  const buses = templates.flatMap((t) => Object.entries(t.Resources).filter(([, r]) => r.Type === 'AWS::Events::EventBus').map(([id]) => id));
  expect(buses).toHaveLength(1);
  return buses[0]!;
}

describe('grants of the functions that raise notices, resolve them or record heartbeats', () => {
  it.each(Object.entries(NOTICE_FUNCTIONS))('%s may write the records table (and put notice.raised on the bus when it raises)', (lambda, spec) => {
    const statements = allowedStatements(lambda);
    // The table itself, not only its indexes: notices and their dedup index items are conditional puts.
    const onTable = actionsOn(statements, STATEFUL_LOGICAL_IDS.recordsTable, { exclude: /\/index\// });
    expect(onTable, `${lambda}: ${spec.why}`).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:PutItem']));
    if (spec.endsWatches) expect(onTable, lambda).toContain('dynamodb:DeleteItem');
    const onBus = actionsOn(statements, busLogicalId());
    if (spec.raises) expect(onBus, `${lambda}: ${spec.why}`).toContain('events:PutEvents');
  });

  it('every function entry outside the route table whose imports reach the notices or heartbeats is listed', () => {
    const routeLambdas = new Set(routes.map((r) => r.lambda));
    const entries = listEntries(join(PROJECT_ROOT, 'functions'))
      .map((file) => relative(join(PROJECT_ROOT, 'functions'), file).replace(/\.ts$/, ''))
      .filter((lambda) => !routeLambdas.has(lambda));
    const reaching = entries.filter((lambda) => {
      const closure = importClosure(`functions/${lambda}.ts`);
      return NOTICE_MODULES.some((m) => closure.has(m));
    });
    // The sweep steps are built by one shared entry (sweep-step-lambda.ts), which is no function of its own.
    const functions = reaching.filter((lambda) => lambda !== 'sweeps/sweep-step-lambda');
    const unlisted = functions.filter((lambda) => !(lambda in NOTICE_FUNCTIONS) && !(lambda in IMPORTS_ONLY));
    expect(unlisted).toEqual([]);
    // Neither list names a function that no longer reaches them.
    const listed = [...Object.keys(NOTICE_FUNCTIONS).filter((lambda) => !routeLambdas.has(lambda)), ...Object.keys(IMPORTS_ONLY)];
    expect(listed.filter((lambda) => !functions.includes(lambda))).toEqual([]);
    // The API functions listed do serve routes.
    for (const lambda of ['judges/api', 'modes/query', 'experiments/api', 'people/api', 'registry/api']) expect(routeLambdas.has(lambda), lambda).toBe(true);
  });
});

function listEntries(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listEntries(join(dir, e.name)) : e.name.endsWith('.ts') && e.name !== 'observability.ts' ? [join(dir, e.name)] : [],
  );
}

/** The project files a file imports at run time (type-only imports left out), transitively; paths from the root. */
function importClosure(start: string): Set<string> {
  const seen = new Set([start]);
  const stack = [start];
  const pattern = /(?:import|export)\s+(?!type\b)[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;
  while (stack.length > 0) {
    const file = stack.pop()!;
    let source: string;
    try {
      source = readFileSync(join(PROJECT_ROOT, file), 'utf8');
    } catch {
      continue;
    }
    for (const m of source.matchAll(pattern)) {
      const next = normalize(join(dirname(file), m[1] ?? m[2]!));
      // The route table imports every handler: the API functions are listed by route instead.
      if (next === 'lib/api/routes.ts' || seen.has(next)) continue;
      seen.add(next);
      stack.push(next);
    }
  }
  return seen;
}
