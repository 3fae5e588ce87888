/**
 * The API stack puts the key authorizer (lib/auth/infra/api-key-authorizer.ts) in front of every method: a REQUEST
 * authorizer on `x-api-key`, cached per key, backed by a function that may only read the records table; API keys stay
 * required (the usage plan throttles per key).
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { routes } from '../../lib/api/routes.ts';
import { resourcesOfType, synthFlywheel, type SynthesizedStage } from '../infra/synth-flywheel.ts';

let synth: SynthesizedStage | undefined;
const get = () => (synth ??= synthFlywheel('dev'));
afterAll(() => {
  if (synth) rmSync(synth.outdir, { recursive: true, force: true });
});

describe('the API key authorizer (dev stage)', () => {
  it('guards every method of the route table but the open ones with a cached REQUEST authorizer on x-api-key', () => {
    const api = get().api;
    const authorizers = Object.entries(resourcesOfType(api, 'AWS::ApiGateway::Authorizer'));
    expect(authorizers).toHaveLength(1);
    const [authorizerId, authorizer] = authorizers[0]!;
    expect(authorizer.Properties).toMatchObject({ Type: 'REQUEST', IdentitySource: 'method.request.header.x-api-key', AuthorizerResultTtlInSeconds: 300 });
    const methods = Object.values(resourcesOfType(api, 'AWS::ApiGateway::Method'));
    expect(methods).toHaveLength(routes.length);
    // The open routes (the console's files, Slack's signed requests) are the only methods without the authorizer.
    const open = routes.filter((r) => !r.apiKeyRequired).map((r) => r.operationId).sort();
    expect(open).toEqual(['getConsole', 'getConsoleAsset', 'postSlackCommand', 'postSlackInteraction']);
    for (const m of methods) {
      const props = m.Properties as { OperationName: string };
      if (open.includes(props.OperationName)) expect(m.Properties).toMatchObject({ AuthorizationType: 'NONE', ApiKeyRequired: false });
      else expect(m.Properties).toMatchObject({ AuthorizationType: 'CUSTOM', AuthorizerId: { Ref: authorizerId }, ApiKeyRequired: true });
    }
  });

  it('its function reads the records table and nothing else of the data', () => {
    const api = get().api;
    const fn = Object.entries(resourcesOfType(api, 'AWS::Lambda::Function')).find(([id]) => id.startsWith('ApiAuthorizer'));
    expect(fn).toBeDefined();
    const policies = Object.values(resourcesOfType(api, 'AWS::IAM::Policy')).filter((p) => JSON.stringify(p.Properties.Roles).includes('ApiAuthorizer'));
    const actions = policies.flatMap((p) => (p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[] }>).flatMap((s) => [s.Action].flat()));
    expect(actions.some((a) => a.startsWith('dynamodb:Get'))).toBe(true);
    expect(actions.filter((a) => /^dynamodb:(Put|Update|Delete|BatchWrite)/.test(a) || a.startsWith('s3:') || a.startsWith('sqs:'))).toEqual([]);
  });
});
