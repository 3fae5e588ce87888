/** The `flywheel` CLI entry: `npm run flywheel -- <command>`, `npx flywheel <command>`, or `node bin/flywheel.ts`. */
import { buildProgram } from '../lib/cli/program.ts';

try {
  await buildProgram().parseAsync(process.argv);
} catch (error) {
  process.stderr.write(`flywheel: ${(error as Error).message}\n`);
  process.exitCode = 1;
}
