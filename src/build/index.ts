/**
 * `sluice/build`: the bundling `sluice build` does, as a library. `buildFunctions()` builds a
 * project's functions; `esbuildPreset()` gives esbuild's options for one function, to use
 * with your own esbuild call.
 */
export { type BuildFunctionsOptions, buildFunctions, type FunctionsBuild } from './build.js'
export { BuildError } from './errors.js'
export { declared, discoverFunctions, type FunctionBundle } from './functions.js'
export {
  esbuildPreset,
  type FunctionTarget,
  fileReads,
  isNodeBuiltin,
  type MetafileLike,
  NODE_BANNER,
  NODE_EXTERNALS,
  nodeImports,
  type PresetChoices,
  type PresetOptions,
  pgProvider,
} from './preset.js'
export { type BundleReport, sizeTable } from './sizes.js'
export {
  NODE_OPTIONS,
  NODE_RUNTIME,
  type VercelRoute,
  vercelRoutes,
  writeVercelOutput,
} from './vercel-output.js'
