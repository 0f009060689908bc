/**
 * Injected into bundles that must carry pg (a Lambda or Vercel function ships no node_modules):
 * `connect()` then loads the bundled copy instead of asking the module loader for one. Nothing
 * in the library imports this file.
 */
import { providePeer } from '../optional.js'

providePeer('pg', () => import('pg'))
