/**
 * The sweep definition exactly as the CDK app synthesizes it for a stage (the Workflows stack's `DefinitionString`),
 * with each CloudFormation token resolved to the local runtime's placeholder ARN (`localSweepArns()`), so the local
 * runtime can run what CloudFormation will receive.
 *
 * Tokens are resolved through the templates and the construct tree, not by position or by state name, so a definition
 * that invoked the wrong function or submitted to the wrong queue would run (or fail) as it would on AWS:
 * - `Fn::GetAtt [<id>, Arn]` of the Workflows stack → the step whose function (`WorkflowsStack.sweep.steps[step]`) has
 *   that logical id → `functions[step]`;
 * - `Fn::GetStackOutput` of the Compute stack → that output's value in the Compute template → the GPU pool's queue
 *   (`Fn::GetAtt [<id>, JobQueueArn]`) → `gpuJobQueue`, or the rollout job definition (`Ref <id>`) →
 *   `rolloutJobDefinition`.
 * Any other token throws, naming it.
 *
 * @example
 * const { definition, resolved } = synthesizedLocalSweepDefinition('dev');
 * new LocalWorkflows(db, { sweep: { ...localSweepWorkflow(options), definition } });
 */
import { rmSync } from 'node:fs';
import { type CfnElement, Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { localSweepArns } from '../../../lib/sweeps/local/local-sweep-workflow.ts';
import type { AslDefinition } from '../../../lib/shared/asl.ts';
import { SWEEP_STEP_NAMES } from '../../../lib/sweeps/workflow/sweep-steps.ts';
import { synthFlywheel } from '../../infra/synth-flywheel.ts';

type Template = { Resources: Record<string, { Type: string; Properties: Record<string, any> }>; Outputs?: Record<string, { Value: unknown }> };

export interface SynthesizedLocalSweep {
  /** The synthesized definition, its tokens replaced by local ARNs. */
  definition: AslDefinition;
  /** Each token met in the DefinitionString (as JSON) → the local ARN it became, in order. */
  resolved: Array<{ token: string; arn: string }>;
}

const cache = new Map<string, SynthesizedLocalSweep>();

export function synthesizedLocalSweepDefinition(stageName: 'dev' | 'prod'): SynthesizedLocalSweep {
  const cached = cache.get(stageName);
  if (cached) return structuredClone(cached);
  const synthesized = synthFlywheel(stageName);
  try {
    const { stage } = synthesized;
    const assembly = stage.synth();
    const workflows = assembly.getStackArtifact(stage.workflows.artifactId).template as Template;
    const compute = assembly.getStackArtifact(stage.compute.artifactId).template as Template;
    const arns = localSweepArns();
    const logicalId = (c: IConstruct) => Stack.of(c).getLogicalId(c.node.defaultChild as CfnElement);

    const functionByLogicalId = new Map(SWEEP_STEP_NAMES.map((step) => [logicalId(stage.workflows.sweep.steps[step].fn), arns.functions[step]]));
    const gpuQueue = logicalId(stage.compute.gpu.queue);
    const rolloutDefinition = logicalId(stage.compute.rollout.jobDefinition);

    const resolve = (token: unknown): string => {
      const t = token as Record<string, any>;
      const getAtt = t['Fn::GetAtt'] as [string, string] | undefined;
      if (getAtt && getAtt[1] === 'Arn' && functionByLogicalId.has(getAtt[0])) return functionByLogicalId.get(getAtt[0])!;
      const output = t['Fn::GetStackOutput'] as { StackName: string; OutputName: string } | undefined;
      if (output && output.StackName === stage.compute.stackName) {
        const value = compute.Outputs?.[output.OutputName]?.Value as Record<string, any> | undefined;
        const att = value?.['Fn::GetAtt'] as [string, string] | undefined;
        if (att && att[0] === gpuQueue && att[1] === 'JobQueueArn') return arns.gpuJobQueue;
        if (value?.Ref === rolloutDefinition) return arns.rolloutJobDefinition;
        throw new Error(`DefinitionString: output ${output.OutputName} of ${output.StackName} (${JSON.stringify(value)}) is neither the GPU queue nor the rollout job definition`);
      }
      throw new Error(`DefinitionString: token ${JSON.stringify(token)} is no sweep step function, GPU queue or rollout job definition`);
    };

    // The sweep's machine (construct id `Sweep`); the stack also holds the judge derivation's (`DeriveJudges`).
    const machines = Object.entries(workflows.Resources)
      .filter(([id, r]) => r.Type === 'AWS::StepFunctions::StateMachine' && id.startsWith('Sweep'))
      .map(([, r]) => r);
    if (machines.length !== 1) throw new Error(`expected one sweep state machine in the Workflows stack, found ${machines.length}`);
    const definitionString = machines[0]!.Properties.DefinitionString as string | { 'Fn::Join': [string, unknown[]] };
    const resolved: SynthesizedLocalSweep['resolved'] = [];
    let text: string;
    if (typeof definitionString === 'string') text = definitionString;
    else if (definitionString && 'Fn::Join' in definitionString) {
      const [separator, parts] = definitionString['Fn::Join'];
      text = parts
        .map((part) => {
          if (typeof part === 'string') return part;
          const arn = resolve(part);
          resolved.push({ token: JSON.stringify(part), arn });
          return arn;
        })
        .join(separator);
    } else throw new Error(`DefinitionString: expected a string or Fn::Join, got ${JSON.stringify(definitionString).slice(0, 200)}`);

    const result = { definition: JSON.parse(text) as AslDefinition, resolved };
    cache.set(stageName, result);
    return structuredClone(result);
  } finally {
    rmSync(synthesized.outdir, { recursive: true, force: true });
  }
}
