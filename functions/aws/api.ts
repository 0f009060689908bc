// The whole HTTP API behind an API Gateway HTTP API.
import { sluice } from '../../examples/app.js'
import { apiHandler } from '../../src/platforms/aws-lambda.js'

export const handler = apiHandler(sluice)
