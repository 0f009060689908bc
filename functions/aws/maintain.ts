// Maintenance on an EventBridge schedule (rate(1 minute)); returns the report.
import { sluice } from '../../examples/app.js'
import { maintainHandler } from '../../src/platforms/aws-lambda.js'

export const handler = maintainHandler(sluice)
