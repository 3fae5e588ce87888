import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { routes } from '../../lib/api/routes.ts';
import { PROJECT_ROOT } from '../../lib/constructs/flywheel-function.ts';
import { addFlywheelStage, type FlywheelStage } from '../../lib/stacks/flywheel-stage.ts';

/** The feature flags and other context of cdk.json, so tests synthesize what `npx cdk synth` does. */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
  return cdkJson.context;
}

export interface SynthesizedStage {
  app: App;
  stage: FlywheelStage;
  data: Template;
  pipeline: Template;
  api: Template;
  /** The app's output directory (temporary: remove it when done). */
  outdir: string;
  /** The stage's cloud assembly directory (templates `*.template.json`). */
  assemblyDir: string;
  templatePaths: string[];
}

/**
 * Synthesizes the app as bin/flywheel-app.ts builds it, for one stage, into a temporary directory. Bundling is
 * skipped (the cfn-lint test runs the real CLI synth with bundling). `extraContext` adds to the app's context (e.g.
 * `judgeModel`).
 */
export function synthFlywheel(stageName: 'dev' | 'prod', extraContext: Record<string, unknown> = {}): SynthesizedStage {
  const outdir = mkdtempSync(join(tmpdir(), `flywheel-infra-${stageName}-`));
  const app = new App({ outdir, context: { ...cdkJsonContext(), stage: stageName, ...extraContext, 'aws:cdk:bundling-stacks': [] } });
  const stage = addFlywheelStage(app, stageName, routes);
  app.synth();
  const stageAssembly = stage.synth();
  const template = (stack: { artifactId: string }) =>
    Template.fromJSON(stageAssembly.getStackArtifact(stack.artifactId).template as Record<string, unknown>);
  const assemblyDir = stageAssembly.directory;
  return {
    app,
    stage,
    outdir,
    data: template(stage.data),
    pipeline: template(stage.pipeline),
    api: template(stage.api),
    assemblyDir,
    templatePaths: readdirSync(assemblyDir)
      .filter((f) => f.endsWith('.template.json'))
      .map((f) => join(assemblyDir, f)),
  };
}

/** The AwsSolutions findings that no acknowledgment covers. */
export function nagViolations(scope: IConstruct): string[] {
  return new AwsSolutionsChecks()
    .validateScope(scope)
    .violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} (${v.severity}) at ${r.constructPath}`));
}

/** Every AwsSolutions finding, acknowledged or not, as `rule@constructPath`. */
export function nagFindingsIgnoringAcknowledgments(scope: IConstruct): string[] {
  const pack = new AwsSolutionsChecks();
  // The pack's own check of acknowledgments, switched off to see what each acknowledgment covers.
  (pack as unknown as { isAcknowledged: () => boolean }).isAcknowledged = () => false;
  return pack.validateScope(scope).violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName}@${r.constructPath}`));
}

/** Every acknowledgment in the tree: the construct path, the rule id and the reason given for it. */
export function acknowledgments(scope: IConstruct): Array<{ path: string; id: string; reason: string }> {
  const found: Array<{ path: string; id: string; reason: string }> = [];
  for (const c of scope.node.findAll()) {
    for (const entry of c.node.metadata) {
      if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
      for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
        found.push({ path: c.node.path, id, reason });
      }
    }
  }
  return found;
}

/** The resources of one type in a template, by logical id. */
export function resourcesOfType(template: Template, type: string): Record<string, { Properties: Record<string, any>; [k: string]: any }> {
  return template.findResources(type) as Record<string, { Properties: Record<string, any> }>;
}
