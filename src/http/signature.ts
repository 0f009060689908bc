// Signing lives in the bottom layer (src/crypto) so that senders below HTTP, such as wake-ups,
// can sign without importing the HTTP layer; signatureAuth verifies with the same functions.
export * from '../crypto/signature.js'
