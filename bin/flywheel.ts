/** The `flywheel` CLI entry: `npm run flywheel -- <command>`, `npx flywheel <command>`, or `node bin/flywheel.ts`. */
import { buildProgram } from '../lib/cli/program.ts';
import { errorLines } from '../lib/cli/target.ts';

try {
  await buildProgram().parseAsync(process.argv);
} catch (error) {
  // A use case run here (a folder suite's registration) throws what the API would answer: its fields by flag.
  const e = error as Error & { issues?: Array<{ path: string; message: string }> };
  const lines = Array.isArray(e.issues) ? errorLines({ error: e.name, message: e.message, issues: e.issues }, 1) : [e.message];
  process.stderr.write(`flywheel: ${lines.join('\n')}\n`);
  process.exitCode = 1;
}
