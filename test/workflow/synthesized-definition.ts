/**
 * The sweep definition exactly as the CDK app synthesizes it (the Workflows stack's `DefinitionString`, a Fn::Join of
 * the rendered JSON around the tokens), with each token replaced by an ARN-like string, so tests can validate and
 * run what CloudFormation will receive.
 */
import { rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { synthFlywheel } from '../infra/synth-flywheel.ts';

const cache = new Map<string, unknown>();

export function synthesizedWorkflowsTemplate(stage: 'dev' | 'prod'): { Resources: Record<string, { Type: string; Properties: Record<string, any> }> } {
  const synthesized = synthFlywheel(stage);
  try {
    const assembly = synthesized.stage.synth();
    return assembly.getStackArtifact(synthesized.stage.workflows.artifactId).template as never;
  } finally {
    rmSync(synthesized.outdir, { recursive: true, force: true });
  }
}

export function synthesizedSweepDefinition(stage: 'dev' | 'prod'): unknown {
  const cached = cache.get(stage);
  if (cached) return cached;
  const template = synthesizedWorkflowsTemplate(stage);
  // The sweep's machine (construct id `Sweep`); the stack also holds the judge derivation's (`DeriveJudges`).
  const machines = Object.entries(template.Resources)
    .filter(([id, r]) => r.Type === 'AWS::StepFunctions::StateMachine' && id.startsWith('Sweep'))
    .map(([, r]) => r);
  if (machines.length !== 1) throw new Error(`expected one sweep state machine in the Workflows stack, found ${machines.length}`);
  const definitionString = machines[0]!.Properties.DefinitionString as string | { 'Fn::Join': [string, unknown[]] };
  const text =
    typeof definitionString === 'string'
      ? definitionString
      : definitionString['Fn::Join'][1]
          .map((part) => (typeof part === 'string' ? part : `arn:aws:lambda:token:000000000000:function:${createHash('sha256').update(JSON.stringify(part)).digest('hex').slice(0, 12)}`))
          .join(definitionString['Fn::Join'][0]);
  const definition = JSON.parse(text) as unknown;
  cache.set(stage, definition);
  return definition;
}
