/** The example app's jobs: each one its contract plus a handler. */
import { defineJob } from '../src/index.js'
import { welcomeEmailContract } from './contracts.js'

export const welcomeEmail = defineJob({
  ...welcomeEmailContract,
  timeout: 10_000,
  run: async (input, ctx) => {
    // A stand-in for an email provider's API call, cancelled by the drain's signal.
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, 50)
      ctx.signal.addEventListener('abort', () => {
        clearTimeout(timer)
        reject(ctx.signal.reason)
      })
    })
    return { sentTo: input.email, attempt: ctx.attempt }
  },
})

export const jobs = [welcomeEmail]
