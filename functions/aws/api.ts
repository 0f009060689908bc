// The whole HTTP API behind an API Gateway HTTP API, and the operator's dashboard at /dashboard.
import { sluice } from '../../examples/app.js'
import { apiHandler } from '../../src/platforms/aws-lambda.js'

export const handler = apiHandler(sluice, { dashboard: true })
