const hidden = new Set((process.env.SLUICE_HIDE_PACKAGES ?? '').split(',').filter(Boolean))

const packageOf = (specifier) =>
  specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]

export async function resolve(specifier, context, next) {
  const name = packageOf(specifier)
  // Hidden from Sluice and the project, not from the packages that depend on it (tsx imports
  // esbuild: it is installed with tsx, whatever the project has).
  if (hidden.has(name) && !context.parentURL?.includes('/node_modules/')) {
    // The error Node's resolver gives for a package that is not installed.
    const error = new Error(`Cannot find package '${name}' imported from ${context.parentURL}`)
    error.code = 'ERR_MODULE_NOT_FOUND'
    throw error
  }
  return next(specifier, context)
}
