// Drain behind a Lambda function URL: POST drains, within the invocation's remaining time.
import { sluice } from '../../examples/app.js'
import { drainHandler } from '../../src/platforms/aws-lambda.js'

export const handler = drainHandler(sluice)
