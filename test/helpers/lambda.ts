import { randomUUID } from 'node:crypto'

/** A Lambda context whose remaining time runs out `remainingMs` from now. */
export function lambdaContext(remainingMs: number, functionName = 'sluice-dev-drain') {
  const deadline = Date.now() + remainingMs
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:eu-west-1:123456789012:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: '2026/11/21/[$LATEST]0123456789abcdef0123456789abcdef',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  }
}

/** A function URL / API Gateway HTTP API (payload format 2.0) event. */
export function httpEventV2(
  method: string,
  path: string,
  options: { body?: string; headers?: Record<string, string>; query?: string } = {},
) {
  const domain = 'abcdefghijklmnopqrstuvwxyz012345.lambda-url.eu-west-1.on.aws'
  const now = new Date()
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: options.query ?? '',
    headers: {
      host: domain,
      'user-agent': 'sluice-test/1.0',
      'x-forwarded-proto': 'https',
      'x-forwarded-for': '203.0.113.7',
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    },
    requestContext: {
      accountId: 'anonymous',
      apiId: 'abcdefghijklmnopqrstuvwxyz012345',
      domainName: domain,
      domainPrefix: 'abcdefghijklmnopqrstuvwxyz012345',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: 'sluice-test/1.0' },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(options.body === undefined ? {} : { body: options.body }),
    isBase64Encoded: false,
  }
}

/** What an EventBridge `rate(1 minute)` rule delivers. */
export function scheduledEvent() {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '123456789012',
    time: new Date().toISOString(),
    region: 'eu-west-1',
    resources: ['arn:aws:events:eu-west-1:123456789012:rule/sluice-dev-MaintainEventsRuleSchedule1'],
    detail: {},
  }
}

export interface LambdaHttpResult {
  statusCode: number
  headers: Record<string, string>
  body: string
  isBase64Encoded: boolean
}
