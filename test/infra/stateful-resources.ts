import { readFileSync } from 'node:fs';
import { Stack } from 'aws-cdk-lib';
import type { SynthesizedStage } from './synth-flywheel.ts';

/**
 * The CloudFormation types whose replacement loses data, in-flight work or something people set up by hand, and why.
 * A refactor that changes the logical id (or the type) of one of them makes CloudFormation create a new, empty one
 * and delete the old. Types the app does not use today are listed too, so one added later is held from its first
 * snapshot. Not listed, because a replacement loses nothing: functions, roles, policies, alarms, rules, schedules,
 * job definitions (a new revision), scheduling policies, the network, the API's resources.
 */
export const STATEFUL_RESOURCE_TYPES = {
  'AWS::DynamoDB::Table': 'the records',
  'AWS::DynamoDB::GlobalTable': 'the records',
  'AWS::S3::Bucket': 'the objects (and their versions)',
  'AWS::SQS::Queue': 'the messages waiting in it, dead letters included',
  'AWS::Logs::LogGroup': 'the log events',
  'AWS::KMS::Key': 'whatever it encrypted becomes unreadable once the old key is deleted',
  'AWS::SNS::Topic': 'the subscriptions people confirmed (e-mail)',
  'AWS::SecretsManager::Secret': 'the secret value set outside the stack',
  'AWS::ECR::Repository': 'the images CI pushed',
  'AWS::Events::EventBus': 'events in flight, and rules others put on it',
  'AWS::Events::Archive': 'the archived events',
  'AWS::Batch::ComputeEnvironment': 'the running jobs of its instances',
  'AWS::Batch::JobQueue': 'the jobs queued and running in it',
  'AWS::StepFunctions::StateMachine': 'the running executions and their history',
  'AWS::Kinesis::Stream': 'the records in it',
  'AWS::EFS::FileSystem': 'the files',
  'AWS::RDS::DBCluster': 'the database',
  'AWS::RDS::DBInstance': 'the database',
  'AWS::Cognito::UserPool': 'the users',
} as const satisfies Record<string, string>;

/** Stage → CloudFormation stack name → logical id → resource type. */
export type StatefulSnapshot = Record<string, Record<string, Record<string, string>>>;

/** The committed snapshot file. */
export const STATEFUL_SNAPSHOT_PATH = new URL('./stateful-resources.json', import.meta.url);

/** The one way to record new stateful resources in the snapshot (it never drops or changes a recorded one). */
export const UPDATE_STATEFUL_SNAPSHOT_COMMAND = 'UPDATE_STATEFUL_SNAPSHOT=1 npx vitest run test/infra/stateful-logical-ids.test.ts';

export interface StatefulSnapshotFile {
  /** How the file is made (written into it for whoever opens it). */
  about: string;
  types: string[];
  stages: StatefulSnapshot;
}

export function readStatefulSnapshot(): StatefulSnapshotFile {
  return JSON.parse(readFileSync(STATEFUL_SNAPSHOT_PATH, 'utf8')) as StatefulSnapshotFile;
}

/** Every stateful resource of every stack of a synthesized stage, by stack name and logical id. */
export function statefulResourcesOf(synthesized: SynthesizedStage): Record<string, Record<string, string>> {
  const assembly = synthesized.stage.synth();
  const byStack: Record<string, Record<string, string>> = {};
  for (const stack of synthesized.stage.node.children.filter(Stack.isStack)) {
    const template = assembly.getStackArtifact(stack.artifactId).template as { Resources?: Record<string, { Type: string }> };
    const stateful: Record<string, string> = {};
    for (const [logicalId, resource] of Object.entries(template.Resources ?? {})) {
      if (resource.Type in STATEFUL_RESOURCE_TYPES) stateful[logicalId] = resource.Type;
    }
    byStack[stack.stackName] = stateful;
  }
  return byStack;
}

export interface StatefulDifference {
  /** Recorded ids no longer in the template: each would be deleted and, if it moved, created anew, empty. */
  missing: string[];
  /** Recorded ids whose type changed: a replacement too. */
  changed: string[];
  /** Stateful resources the snapshot does not hold yet. */
  unrecorded: string[];
}

/** What differs between the recorded and the synthesized stateful resources, one line per resource. */
export function compareStateful(recorded: StatefulSnapshot, current: StatefulSnapshot): StatefulDifference {
  const difference: StatefulDifference = { missing: [], changed: [], unrecorded: [] };
  for (const [stage, stacks] of Object.entries(recorded)) {
    for (const [stackName, resources] of Object.entries(stacks)) {
      for (const [logicalId, type] of Object.entries(resources)) {
        const now = current[stage]?.[stackName]?.[logicalId];
        if (now === undefined) difference.missing.push(`${stackName}: ${logicalId} (${type}) is gone`);
        else if (now !== type) difference.changed.push(`${stackName}: ${logicalId} was ${type}, is ${now}`);
      }
    }
  }
  for (const [stage, stacks] of Object.entries(current)) {
    for (const [stackName, resources] of Object.entries(stacks)) {
      for (const [logicalId, type] of Object.entries(resources)) {
        if (recorded[stage]?.[stackName]?.[logicalId] === undefined) difference.unrecorded.push(`${stackName}: ${logicalId} (${type})`);
      }
    }
  }
  return difference;
}

/** The recorded snapshot with the unrecorded resources added, keys sorted so the file diffs cleanly. */
export function withAdditions(recorded: StatefulSnapshot, current: StatefulSnapshot): StatefulSnapshot {
  const merged: StatefulSnapshot = {};
  for (const stage of [...new Set([...Object.keys(recorded), ...Object.keys(current)])].sort()) {
    merged[stage] = {};
    const stackNames = new Set([...Object.keys(recorded[stage] ?? {}), ...Object.keys(current[stage] ?? {})]);
    for (const stackName of [...stackNames].sort()) {
      const resources = { ...current[stage]?.[stackName], ...recorded[stage]?.[stackName] };
      merged[stage][stackName] = Object.fromEntries(Object.entries(resources).sort(([a], [b]) => a.localeCompare(b)));
    }
  }
  return merged;
}
