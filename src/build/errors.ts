import { SluiceError } from '../errors.js'

/** A bundle that cannot be built, or must not ship (a Node built-in in an edge bundle, a file read). */
export class BuildError extends SluiceError {
  constructor(message: string) {
    super('FAILED', message)
  }
}
