// `node --import ./hide-packages.mjs`: the packages named in SLUICE_HIDE_PACKAGES (comma-separated)
// resolve as if they were not installed, as in a project that never installed the optional peers.
import { register } from 'node:module'

register(new URL('./hide-packages-hooks.mjs', import.meta.url))
