/**
 * A sweep runtime in its own process, for the crash test: opens the runtime on argv[2] (data folder), starts the
 * sweep execution named argv[4] with the JSON input argv[5] against the model at argv[3], prints `started`, and runs
 * until it is killed (SIGKILL: nothing is cleaned up, as in a crash).
 */
import { SWEEP_WORKFLOW } from '../../../lib/sweeps/workflow/sweep.asl.ts';
import { minimalSweepSteps } from './minimal-sweep-steps.ts';
import { openSweepRuntime } from './sweep-runtime.ts';

const [dataDir, modelUrl, name, input] = process.argv.slice(2) as [string, string, string, string];
const runtime = openSweepRuntime({ dataDir, modelUrl, steps: minimalSweepSteps() });
const { executionId } = await runtime.workflows.start(SWEEP_WORKFLOW, { name, input: JSON.parse(input) });
process.stdout.write(`started ${executionId}\n`);
setInterval(() => {}, 1 << 30);
