/**
 * A request whose API key is missing, unknown, revoked or lacks the route's scope (403, `Flywheel.Forbidden`): thrown
 * by `authorizeRequest` and the dispatcher, answered with its status by `errorResult` (`ERROR_STATUS`).
 *
 * @example
 * if (!hasScope(principal.scopes, 'admin')) throw new ForbiddenError('Forbidden: this route needs the admin scope');
 */
import { FlywheelError } from '../errors.ts';

/** The names of auth's errors, as the HTTP shell's status map and a log query spell them. */
export const AuthErrorNames = {
  forbidden: 'Flywheel.Forbidden',
} as const;

export class ForbiddenError extends FlywheelError {
  constructor(message = 'Invalid API key') {
    super(AuthErrorNames.forbidden, message);
  }
}
