import { expect, test } from 'vitest'
import { resumedElsewhere } from '../../../src/drain/claimed.js'

test("a settle's resumed parents are left to other drains when this one does not serve their queue, or ends", () => {
  const queues = ['children', 'parents']
  // Sent with a claim: a parent in one of the drain's queues is this drain's to take.
  expect(resumedElsewhere(['parents', 'elsewhere'], queues, false)).toEqual(['elsewhere'])
  expect(resumedElsewhere(null, queues, false)).toEqual([])
  // The drain's last settle: nothing of it will be taken by this drain.
  expect(resumedElsewhere(['parents', 'elsewhere'], queues, true)).toEqual(['parents', 'elsewhere'])
})
