/** The tests' free port is the one the local vLLM stand-in takes (`lib/shared/free-port.ts`). */
export { freePort } from '../../lib/shared/free-port.ts';
