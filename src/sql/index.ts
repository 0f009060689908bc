export * from './claim.js'
export * from './dead-letters.js'
export * from './enqueue.js'
export * from './settle.js'
