import { SluiceError } from '../errors.js'

/** A bundle that cannot be built, or must not ship (a Node built-in in an edge bundle, a file read). */
export class BuildError extends SluiceError {
  /** `INVALID_INPUT`: the build was asked for something that is not there (an entry, a package). */
  constructor(message: string, code: 'FAILED' | 'INVALID_INPUT' = 'FAILED') {
    super(code, message)
  }
}
