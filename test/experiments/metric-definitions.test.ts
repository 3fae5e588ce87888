/**
 * Metric definitions over real HTTP through the local runtime (key check, scopes, tenants): declare (201), re-declare
 * the same (200) or with new words (200, replaced), a new kind or a built-in's name (409), bad fields named, scopes,
 * listing with the built-ins; and `resolveMetricDefinitions`, which names every unknown reference's path.
 */
import { describe, expect, it } from 'vitest';
import { createApiKey } from '../../lib/auth/api-keys.ts';
import { scopePortsToTenant } from '../../lib/auth/tenant-ports.ts';
import { resolveMetricDefinitions } from '../../lib/experiments/metric-definitions.ts';
import { BUILT_IN_METRICS } from '../../lib/experiments/schemas.ts';
import { ValidationError } from '../../lib/errors.ts';
import { useLocalRuntime } from '../judges/support/http-runtime.ts';

const { start } = useLocalRuntime('flywheel-metric-definitions-');

const editsKept = { name: 'edits_kept', description: 'Edits still in the file a day later.', kind: 'mean', source: 'edits_kept', direction: 'increase', capValue: 50 };

describe('metric definitions over HTTP', () => {
  it('declares, re-declares, refuses a new kind or a built-in name, names bad fields, and lists with the built-ins', async () => {
    const { call, side, runtime } = await start();
    const created = await call('POST', '/v1/metric-definitions', editsKept);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ ...editsKept, displayScale: 1 });
    expect(Date.parse(created.body.createdAt)).not.toBeNaN();

    const same = await call('POST', '/v1/metric-definitions', editsKept);
    expect(same.status).toBe(200);
    expect(same.body).toEqual(created.body);

    const reworded = await call('POST', '/v1/metric-definitions', { ...editsKept, description: 'Edits kept after 24 h.', unit: 'edits' });
    expect(reworded.status).toBe(200);
    expect(reworded.body).toMatchObject({ description: 'Edits kept after 24 h.', unit: 'edits', createdAt: created.body.createdAt });

    const newKind = await call('POST', '/v1/metric-definitions', { name: 'edits_kept', kind: 'binomial', source: 'edits_kept', direction: 'increase' });
    expect(newKind.status).toBe(409);
    expect(newKind.body.message).toContain('mean');
    const builtIn = await call('POST', '/v1/metric-definitions', { name: 'thumbs_up_rate', kind: 'mean', source: 'feedback.thumb', direction: 'increase' });
    expect(builtIn.status).toBe(409);

    const bad = await call('POST', '/v1/metric-definitions', { name: 'Bad Name', kind: 'ratio', source: 'x', direction: 'up', capValue: -1, extra: true });
    expect(bad.status).toBe(400);
    expect(bad.body.issues.map((i: any) => i.path).sort()).toEqual(['capValue', 'direction', 'extra', 'name']);
    const ratio = await call('POST', '/v1/metric-definitions', { name: 'errors_per_session', kind: 'ratio', source: 'tool_errors', direction: 'decrease' });
    expect(ratio.status).toBe(400);
    expect(ratio.body.issues.map((i: any) => i.path).sort()).toEqual(['denominator', 'numerator', 'source']);
    const okRatio = await call('POST', '/v1/metric-definitions', {
      name: 'errors_per_session',
      kind: 'ratio',
      numerator: { metric: 'tool_errors' },
      denominator: { metric: '$exposures', aggregate: 'count' },
      direction: 'decrease',
    });
    expect(okRatio.status).toBe(201);
    expect(okRatio.body.numerator).toEqual({ metric: 'tool_errors', aggregate: 'sum' });

    const list = await call('GET', '/v1/metric-definitions');
    expect(list.status).toBe(200);
    const names = list.body.items.map((d: any) => d.name);
    expect(names).toEqual([...BUILT_IN_METRICS.map((d) => d.name), 'edits_kept', 'errors_per_session']);
    expect(list.body.items.find((d: any) => d.name === 'edits_kept')).toMatchObject({ description: 'Edits kept after 24 h.' });
    expect(list.body.items[0].builtIn).toBe(true);

    // Declaring is admin's; listing is read's; another tenant sees only the built-ins and its own.
    const { key: ingestKey } = await createApiKey(side.records, { tenant: 'acme', scopes: 'ingest,read' }, new Date());
    const asAcme = (method: string, body?: unknown) =>
      fetch(`${runtime.url}/v1/metric-definitions`, { method, headers: { 'x-api-key': ingestKey, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
    expect((await asAcme('POST', editsKept)).status).toBe(403);
    const acmeList = (await (await asAcme('GET')).json()) as { items: Array<{ name: string }> };
    expect(acmeList.items.map((d) => d.name)).toEqual(BUILT_IN_METRICS.map((d) => d.name));
  });
});

describe('resolveMetricDefinitions', () => {
  it('resolves built-ins and declared names, and names the path of every unknown one', async () => {
    const { call, side } = await start();
    expect((await call('POST', '/v1/metric-definitions', editsKept)).status).toBe(201);
    const defs = await resolveMetricDefinitions(side.records, [
      { name: 'accepted', path: 'metrics.primary' },
      { name: 'edits_kept', path: 'metrics.secondary[0]' },
      { name: 'accepted', path: 'metrics.guardrails[0].metric' },
    ]);
    expect([...defs.keys()].sort()).toEqual(['accepted', 'edits_kept']);
    expect(defs.get('edits_kept')).toMatchObject({ kind: 'mean', capValue: 50 });
    expect(defs.get('accepted')).toMatchObject({ kind: 'binomial', builtIn: true });

    const refused = await resolveMetricDefinitions(side.records, [
      { name: 'accepted', path: 'metrics.primary' },
      { name: 'nope', path: 'metrics.secondary[1]' },
      { name: 'also_nope', path: 'metrics.guardrails[0].metric' },
    ]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).issues.map((i) => i.path)).toEqual(['metrics.secondary[1]', 'metrics.guardrails[0].metric']);
    // A tenant's view does not see the default tenant's declarations.
    const acme = scopePortsToTenant({ ...side }, 'acme');
    await expect(resolveMetricDefinitions(acme.records, [{ name: 'edits_kept', path: 'metrics.primary' }])).rejects.toThrow(/metrics\.primary/);
  });
});
