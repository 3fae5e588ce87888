import { Command } from 'commander';
import { openLocalPorts } from '../drivers/local/local-ports.ts';
import { retrainClassifier } from '../modes/current-classifier.ts';
import { reindexModeExamples } from '../modes/list-mode-examples.ts';
import { table } from './table.ts';
import { callForCli, dataDirFrom, targetOptions, type TargetFlags } from './target.ts';
import { cellText } from './format.ts';

interface Flags extends TargetFlags {
  model?: string;
  compare?: string;
  since?: string;
  until?: string;
  status?: string;
  limit?: string;
  threshold?: string;
  modes?: string;
  labeller?: string;
  severity?: string;
  note?: string;
  cursor?: string;
  minClusterSize?: string;
  minCount?: string;
  embeddingModel?: string;
  suggestNames?: string;
  json?: boolean;
}

/** The API target's options, and `--json`: every modes command prints the answer as it came on request. */
function modesOptions(command: Command): Command {
  return targetOptions(command).option('--json', 'print the raw JSON answer');
}

function query(flags: Flags, names: (keyof Flags)[]): string {
  const p = new URLSearchParams();
  for (const n of names) if (typeof flags[n] === 'string') p.set(n, flags[n] as string);
  return p.size > 0 ? `?${p}` : '';
}

/** Prints the JSON on --json, an error answer to stderr (exit 1); otherwise hands the body to `render`. */
async function show(flags: Flags, method: 'GET' | 'POST', path: string, render: (body: Record<string, unknown>) => string, body?: unknown) {
  const answer = await callForCli<Record<string, unknown>>(flags, method, path, body);
  if (answer !== undefined) process.stdout.write(render(answer));
}

type Row = Record<string, unknown>;
/** A value as cell text: numbers rounded, lists and objects as plain text (no JSON in human output). */
const s = (v: unknown) => cellText(v);

/** `flywheel modes list|examples|review|label|clusters|promote-cluster|drafts|approve`: the failure-mode API from the shell. */
export function registerModesCommands(program: Command): void {
  const modes = program.command('modes').description('failure modes: counts per checkpoint, examples, the review queue, clusters');

  modesOptions(
    modes
      .command('list')
      .description('counts and rates per thousand turns per mode, with the trend; --model a,b compares side by side')
      .option('--model <ids>', 'checkpoint id(s), comma-separated')
      .option('--compare <ids>', 'more checkpoints to put beside --model')
      .option('--since <iso>', 'window start (default: 7 days before --until)')
      .option('--until <iso>', 'window end (default: now)'),
  ).action((flags: Flags) =>
    show(flags, 'GET', `/v1/failure-modes${query(flags, ['model', 'compare', 'since', 'until'])}`, (b) => {
      const cps = (b.checkpoints as Row[]) ?? [];
      let out = `window ${s((b.window as Row).since)} → ${s((b.window as Row).until)}; rates per 1000 ${s(b.turnsBasis)}\n`;
      for (const c of cps) {
        const t = c.totals as Row;
        out += `\n${s(c.model)}: ${s(t.signals)} signals, ${s(t.turns)} turns, ratings ${s(t.ratings)}, outcomes ${s(t.outcomes)}\n`;
        const k = (t.labelKinds as Row | undefined) ?? {};
        out += `labels: ${s(k.people)} by people, ${s(k.confident)} confident predictions, ${s(k.unreviewed)} unreviewed guesses\n`;
        out += table(
          ['mode', 'count', 'people', 'confident', 'unreviewed', 'per1000', 'previous', 'trend'],
          (c.modes as Row[]).map((m) => {
            const b = (m.byLabel as Row | undefined) ?? {};
            return [s(m.mode), s(m.count), s(b.people), s(b.confident), s(b.unreviewed), s(m.perThousandTurns), s(m.previousPerThousandTurns), s(m.trend)];
          }),
        );
      }
      return out;
    }),
  );

  modesOptions(
    modes
      .command('examples <mode>')
      .description("a mode's newest examples with evidence, and the eval cases made from it")
      .option('--model <id>', 'only this checkpoint')
      .option('--limit <n>', 'how many')
      .option('--cursor <c>', 'the next page (printed under a full page)'),
  ).action((mode: string, flags: Flags) =>
    show(
      flags,
      'GET',
      `/v1/failure-modes/${encodeURIComponent(mode)}/examples${query(flags, ['model', 'limit', 'cursor'])}`,
      (b) =>
        table(
          ['signal', 'model', 'source', 'confidence', 'text'],
          ((b.items as Row[]) ?? []).map((i) => [s(i.signalKey), s(i.model), s(i.source), s(i.confidence), s((i.evidence as Row | undefined)?.text ?? i.excerpt)]),
        ) + (b.cursor ? `more: --cursor ${s(b.cursor)}\n` : ''),
    ),
  );

  modesOptions(
    modes.command('review').description('the human review queue').option('--status <s>', 'pending | done', 'pending').option('--limit <n>', 'page size'),
  ).action((flags: Flags) =>
    show(flags, 'GET', `/v1/review-queue${query(flags, ['status', 'limit'])}`, (b) =>
      table(
        ['id', 'reason', 'model', 'suggested', 'text'],
        ((b.items as Row[]) ?? []).map((i) => [s(i.id), s(i.reason), s(i.model), ((i.suggested as Row[]) ?? []).map((m) => m.mode).join(','), s(i.excerpt)]),
      ),
    ),
  );

  modesOptions(
    modes
      .command('label <id>')
      .description('label a signal by hand (id: feedback:<eventId> or report:<reportId>)')
      .requiredOption('--modes <ids>', 'mode ids, comma-separated ("" = no failure mode)')
      .option('--labeller <who>', 'who labels (default: $USER)')
      .option('--severity <s>', 'low | medium | high | critical')
      .option('--note <text>', 'a note'),
  ).action((id: string, flags: Flags) =>
    show(
      flags,
      'POST',
      `/v1/review-queue/${encodeURIComponent(id)}/label`,
      (b) => `labelled ${s(b.signalKey)}: ${((b.modes as Row[]) ?? []).map((m) => m.mode).join(', ') || '(no mode)'} by ${s(b.labelledBy)}\n`,
      {
        modes: (flags.modes ?? '').split(',').filter((m) => m !== ''),
        labeller: flags.labeller ?? process.env.USER ?? 'cli',
        ...(flags.severity ? { severity: flags.severity } : {}),
        ...(flags.note ? { note: flags.note } : {}),
      },
    ),
  );

  modesOptions(
    modes
      .command('clusters')
      .description('clusters of comments; candidate modes (recurring, not explained by the taxonomy) first')
      .option('--since <iso>', 'window start (default: 28 days before --until)')
      .option('--until <iso>', 'window end')
      .option('--min-cluster-size <n>', 'HDBSCAN: the smallest group that counts as a cluster (default 5)')
      .option('--min-count <n>', 'a candidate mode has at least this many members (default 3)')
      .option('--embedding-model <id>', 'cluster the vectors of this embedding model (default: that of the newest comment)')
      .option('--model <id>', 'only comments about this checkpoint')
      .option('--suggest-names <how>', 'terms | model (the judge model names up to 10 candidates)'),
  ).action((flags: Flags) =>
    show(flags, 'GET', `/v1/clusters${query(flags, ['since', 'until', 'model', 'minClusterSize', 'minCount', 'embeddingModel', 'suggestNames'])}`, (b) =>
      `embedding model ${s(b.embeddingModel)}: ${s(b.comments)} comments, ${s(b.noise)} in no cluster, ${s(b.positivesExcluded)} praise left out\n` +
      table(
        ['id', 'members hash', 'count', 'candidate', 'suggested name', 'top terms', 'trend', 'modes', 'example'],
        ((b.clusters as Row[]) ?? []).map((c) => [
          s(c.id),
          s(c.membersHash),
          s(c.count),
          c.promoted ? `promoted: ${s((c.promoted as Row).mode)}` : c.candidateMode ? 'yes' : '',
          s((c.suggestedName as Row | undefined)?.name),
          ((c.topTerms as Row[]) ?? []).slice(0, 5).map((t) => s(t.term)).join(' '),
          s((c.trend as Row).direction),
          s(c.modes),
          s(((c.examples as Row[]) ?? [])[0]?.text),
        ]),
      ),
    ),
  );

  modesOptions(
    modes
      .command('promote-cluster <clusterId>')
      .description('adopt a cluster as a new mode: a new taxonomy version, earlier labels mapped to it, its members given the mode as an unreviewed suggestion')
      .requiredOption('--id <modeId>', 'the new mode id (kebab-case)')
      .requiredOption('--name <name>', 'the mode name')
      .requiredOption('--definition <text>', 'what the mode means, for reviewers and the judge')
      .requiredOption('--members-hash <hash>', 'the cluster\'s members hash as `modes clusters` showed it (refused if its members changed since)')
      .option('--promoted-by <who>', 'who adopts it (default: $USER)')
      .option('--example <text...>', 'examples (default: the cluster\'s consented comments)'),
  ).action((clusterId: string, flags: Flags & { id: string; name: string; definition: string; membersHash: string; promotedBy?: string; example?: string[] }) =>
    show(
      flags,
      'POST',
      `/v1/clusters/${encodeURIComponent(clusterId)}/promote`,
      (b) => {
        const t = b.taxonomy as Row;
        const sl = b.suggestedLabels as Row;
        return `promoted ${s(b.clusterId)} as ${s((t.mode as Row).id)} in taxonomy v${s(t.version)} (from v${s(t.parentVersion)}); ${s(sl.count)} members have it as an unreviewed suggestion\n`;
      },
      {
        id: flags.id,
        name: flags.name,
        definition: flags.definition,
        membersHash: flags.membersHash,
        promotedBy: flags.promotedBy ?? process.env.USER ?? 'cli',
        ...(flags.example && flags.example.length > 0 ? { examples: flags.example } : {}),
      },
    ),
  );

  modesOptions(
    modes
      .command('drafts')
      .description('eval drafts; with --from-cluster or --from-report, ask the judge model for a new one')
      .option('--status <s>', 'pending | approved', 'pending')
      .option('--from-cluster <id>', 'draft a case from this cluster')
      .option('--from-report <id>', 'draft a case from this report'),
  ).action((flags: Flags & { fromCluster?: string; fromReport?: string }) => {
    if (flags.fromCluster || flags.fromReport) {
      return show(flags, 'POST', '/v1/eval-drafts', (b) => `drafted ${s(b.id)}: ${s(b.instruction)}\n`, {
        ...(flags.fromCluster ? { fromCluster: flags.fromCluster } : {}),
        ...(flags.fromReport ? { fromReport: flags.fromReport } : {}),
      });
    }
    return show(flags, 'GET', `/v1/eval-drafts${query(flags, ['status'])}`, (b) =>
      table(['id', 'status', 'modes', 'instruction'], ((b.items as Row[]) ?? []).map((d) => [s(d.id), s(d.status), s((d.lineage as Row).modes), s(d.instruction)])),
    );
  });

  modesOptions(
    modes
      .command('approve <draftId>')
      .description('approve an eval draft: it joins the private suite as a harness task')
      .option('--approver <who>', 'who approves (default: $USER)')
      .option('--suite <id>', 'private suite id (default failure-modes-private)')
      .option('--repo <url>', 'git repository of the case (default: from the source signals)')
      .option('--commit <sha>', 'commit of --repo'),
  ).action((draftId: string, flags: Flags & { approver?: string; suite?: string; repo?: string; commit?: string }) =>
    show(flags, 'POST', `/v1/eval-drafts/${encodeURIComponent(draftId)}/approve`, (b) => `approved: task ${s((b.task as Row).id)} in ${s((b.task as Row).suite)} v${s(b.suiteVersion)}\n`, {
      approver: flags.approver ?? process.env.USER ?? 'cli',
      ...(flags.suite ? { suite: flags.suite } : {}),
      ...(flags.repo ? { repo: { kind: 'git', url: flags.repo, commit: flags.commit ?? '' } } : {}),
    }),
  );

  modes
    .command('reindex-examples')
    .description('give mode examples stored before the per-checkpoint index their index keys, so examples --model finds them (idempotent)')
    .option('--data-dir <dir>', 'local data folder (env FLYWHEEL_DATA_DIR; default .flywheel/)')
    .action(async (flags: { dataDir?: string }) => {
      const ports = await openLocalPorts(dataDirFrom(flags));
      try {
        const r = await reindexModeExamples(ports);
        process.stdout.write(`${r.reindexed} of ${r.scanned} examples reindexed over ${r.modes} modes\n`);
      } finally {
        ports.close();
      }
    });

  modes
    .command('retrain')
    .description(
      'retrain the local classifier on the labelled set plus the consented judge and human labels gathered so far, store it, and make it current (every process picks it up within 5 minutes)',
    )
    .option('--data-dir <dir>', 'local data folder (env FLYWHEEL_DATA_DIR; default .flywheel/)')
    .option('--json', 'print the new model\'s summary as JSON')
    .action(async (flags: { dataDir?: string; json?: boolean }) => {
      const ports = await openLocalPorts(dataDirFrom(flags));
      try {
        const model = await retrainClassifier(ports);
        const summary = { modelVersion: model.modelVersion, taxonomyVersion: model.taxonomyVersion, trainedAt: model.trainedAt, training: model.training };
        process.stdout.write(
          flags.json
            ? `${JSON.stringify(summary, null, 2)}\n`
            : `current classifier: ${summary.modelVersion} (taxonomy v${summary.taxonomyVersion}), ${summary.training.examples} examples: ${Object.entries(summary.training.labelSources)
                .map(([k, v]) => `${v} ${k}`)
                .join(', ')}\n`,
        );
      } finally {
        ports.close();
      }
    });
}
