import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../lib/errors.ts';
import {
  defaultTaxonomy,
  MODE_IDS,
  modeIds,
  OTHER_MODE,
  parseTaxonomy,
  resolveMode,
  reviseTaxonomy,
} from '../../../lib/modes/taxonomy/taxonomy.ts';

const at = new Date('2026-12-02T12:00:00.000Z');

function issuesOf(fn: () => unknown): { path: string; message: string }[] {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return [...(e as ValidationError).issues];
  }
  throw new Error('expected a ValidationError');
}

describe('defaultTaxonomy', () => {
  it('is version 1 with the seven seed modes plus other, each defined with examples', () => {
    const t = defaultTaxonomy();
    expect(t.version).toBe(1);
    expect(modeIds(t)).toEqual([...MODE_IDS]);
    expect(MODE_IDS).toContain(OTHER_MODE);
    for (const m of t.modes) {
      expect(m.definition.length).toBeGreaterThan(40);
      expect(m.examples.length).toBeGreaterThanOrEqual(2);
    }
  });

  it('returns an independent copy each time', () => {
    const a = defaultTaxonomy();
    a.modes[0]!.name = 'changed';
    expect(defaultTaxonomy().modes[0]!.name).toBe('Complex instruction following');
  });
});

describe('parseTaxonomy', () => {
  it('lists every offending field', () => {
    const bad = { ...defaultTaxonomy(), version: 0, modes: [...defaultTaxonomy().modes, { ...defaultTaxonomy().modes[1]!, examples: [] }] };
    const paths = issuesOf(() => parseTaxonomy(bad)).map((i) => i.path);
    expect(paths).toContain('version');
    expect(paths).toContain('modes.8.examples');
    expect(paths).toContain('modes.8.id'); // duplicate id
  });

  it('rejects a taxonomy without "other" and ids that are not kebab-case', () => {
    const t = defaultTaxonomy();
    const noOther = { ...t, modes: t.modes.filter((m) => m.id !== OTHER_MODE) };
    expect(issuesOf(() => parseTaxonomy(noOther)).map((i) => i.message).join()).toMatch(/"other"/);
    const badId = { ...t, modes: [...t.modes, { id: 'Bad Id', name: 'x', definition: 'x', examples: ['x'] }] };
    expect(issuesOf(() => parseTaxonomy(badId))[0]!.path).toBe('modes.8.id');
  });
});

describe('reviseTaxonomy', () => {
  it('makes a new version and leaves the previous one untouched', () => {
    const v1 = defaultTaxonomy();
    const before = JSON.stringify(v1);
    const v2 = reviseTaxonomy(
      v1,
      {
        add: [{ id: 'latency', name: 'Latency', definition: 'Answers arrive too slowly to be useful.', examples: ['3 minutes for a one-line answer'] }],
        update: [{ id: 'communication', definition: 'How the agent talks: verbosity, unverified claims, tone.' }],
        note: 'latency complaints recur',
      },
      at,
    );
    expect(JSON.stringify(v1)).toBe(before);
    expect(v2).toMatchObject({ version: 2, parentVersion: 1, createdAt: at.toISOString(), note: 'latency complaints recur' });
    expect(modeIds(v2)).toEqual([...MODE_IDS, 'latency']);
    expect(v2.modes.find((m) => m.id === 'communication')!.definition).toMatch(/^How the agent talks/);
    expect(v1.modes.find((m) => m.id === 'communication')!.definition).not.toMatch(/^How the agent talks/);
  });

  it('retires a mode, records the merge, and maps old labels forward', () => {
    const v2 = reviseTaxonomy(defaultTaxonomy(), { remove: [{ id: 'ui-execution', mergedInto: 'other' }] }, at);
    expect(modeIds(v2)).not.toContain('ui-execution');
    expect(v2.retired).toEqual([{ id: 'ui-execution', retiredIn: 2, mergedInto: 'other' }]);
    expect(resolveMode(v2, 'ui-execution')).toBe('other');
    expect(resolveMode(v2, 'scope-calibration')).toBe('scope-calibration');
    expect(resolveMode(v2, 'never-existed')).toBeUndefined();
    // v3 drops "communication" without a successor; a v1 "ui-execution" label still resolves through v2's merge
    const v3 = reviseTaxonomy(
      v2,
      {
        add: [{ id: 'design-fidelity', name: 'Design fidelity', definition: 'Output does not match the design.', examples: ['not like the Figma'] }],
        remove: [{ id: 'communication' }],
      },
      at,
    );
    expect(v3.version).toBe(3);
    expect(resolveMode(v3, 'communication')).toBeUndefined();
    expect(resolveMode(v3, 'ui-execution')).toBe('other');
  });

  it('refuses to remove "other", to reuse a retired id, or to touch unknown modes, naming each change', () => {
    const v2 = reviseTaxonomy(defaultTaxonomy(), { remove: [{ id: 'ui-execution' }] }, at);
    const issues = issuesOf(() =>
      reviseTaxonomy(v2, {
        add: [{ id: 'ui-execution', name: 'UI', definition: 'back again', examples: ['x'] }],
        update: [{ id: 'nope', name: 'x' }],
        remove: [{ id: OTHER_MODE }, { id: 'scope-calibration', mergedInto: 'ui-execution' }],
      }),
    );
    expect(issues.map((i) => i.path).sort()).toEqual(['add.0.id', 'remove.0.id', 'remove.1.mergedInto', 'update.0.id']);
  });

  it('rejects an empty revision', () => {
    expect(() => reviseTaxonomy(defaultTaxonomy(), {})).toThrow(/at least one mode/);
  });
});
