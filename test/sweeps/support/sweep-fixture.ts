/**
 * Sweeps and registry tests over the REAL local drivers (SQLite records, filesystem blobs, local event bus) in a
 * temporary folder, with a controllable clock; API requests go through the real dispatcher and route table.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { makeDispatcher } from '../../../lib/api/dispatch.ts';
import { routes } from '../../../lib/api/routes.ts';
import { STAGES, type SweepSettings } from '../../../lib/config/stages.ts';
import { openLocalPorts, type LocalPorts } from '../../../lib/drivers/local/local-ports.ts';
import type { PublishedEvent } from '../../../lib/drivers/local/local-events.ts';
import type { WorkflowsPort } from '../../../lib/ports/workflows.ts';
import { registerCheckpoint } from '../../../lib/registry/register-checkpoint.ts';
import { registryKeys } from '../../../lib/registry/record-keys.ts';
import { registerSuite } from '../../../lib/registry/register-suite.ts';
import { sampleTask } from './scripted-rollout.ts';
import { apiEvent } from '../../support/lambda-events.ts';

export interface SweepFixture {
  /** The data folder of the local ports. */
  dir: string;
  ports: LocalPorts & { workflows?: WorkflowsPort };
  clock: { now: Date };
  settings: SweepSettings;
  events: PublishedEvent[];
  request(method: string, path: string, options?: { body?: unknown; query?: Record<string, string> }): Promise<{ status: number; json: any }>;
  /** Registers checkpoints `ck-<i>` (each of its own model `m<i>`) and suites with `tasks` task ids each. */
  seed(options: { checkpoints: number; suites: number; tasks: number }): Promise<{ checkpoints: string[]; suites: string[] }>;
  tick(ms: number): void;
  close(): void;
}

export function openSweepFixture(options: { settings?: Partial<SweepSettings>; workflows?: WorkflowsPort; start?: Date } = {}): SweepFixture {
  const dir = mkdtempSync(join(tmpdir(), 'flywheel-sweeps-'));
  const clock = { now: options.start ?? new Date('2026-12-02T10:00:00.000Z') };
  const base = openLocalPorts(dir, { now: () => clock.now });
  const ports = Object.assign(base, options.workflows ? { workflows: options.workflows } : {});
  const events: PublishedEvent[] = [];
  base.events.subscribe('*', (e) => {
    events.push(e);
  });
  const dispatch = makeDispatcher(routes, ports);
  const settings: SweepSettings = { ...STAGES.local.sweeps, ...options.settings };
  return {
    dir,
    ports,
    clock,
    settings,
    events,
    async request(method, path, o = {}) {
      const body = o.body === undefined ? null : JSON.stringify(o.body);
      const res: APIGatewayProxyResult = await dispatch(apiEvent(method, path, body, body === null ? {} : { 'Content-Type': 'application/json' }, o.query));
      return { status: res.statusCode, json: JSON.parse(res.body) };
    },
    async seed({ checkpoints, suites, tasks }) {
      const cks: string[] = [];
      for (let i = 0; i < checkpoints; i++) {
        const id = `ck-${i}`;
        await registerCheckpoint(ports, { id, model: `m${i}`, serving: { kind: 'endpoint', model: `openai:${id}@http://127.0.0.1:9/v1` }, sweep: false });
        cks.push(id);
        clock.now = new Date(clock.now.getTime() + 1000);
      }
      const ss: string[] = [];
      for (let j = 0; j < suites; j++) {
        const id = `suite-${j}`;
        const taskIds = Array.from({ length: tasks }, (_, t) => `t${String(t).padStart(3, '0')}`);
        // Task records as the forge leaves them: the task JSON in the `task` attribute.
        await ports.records.putMany(taskIds.map((t) => ({ ...registryKeys.task(id, t), kind: 'forge-task', task: sampleTask(id, t) })));
        await registerSuite(ports, { id, visibility: j % 2 === 0 ? 'public' : 'private', owner: 'evals', tasks: { kind: 'records' }, taskIds });
        ss.push(id);
      }
      return { checkpoints: cks, suites: ss };
    },
    tick(ms) {
      clock.now = new Date(clock.now.getTime() + ms);
    },
    close() {
      base.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
