/*
 * Copyright 2018 The Starlark in Rust Authors.
 * Copyright (c) Facebook, Inc. and its affiliates.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *     https://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

//! Detect recursion when doing `repr` or `to_json`.

use std::cell::Cell;

use crate::collections::SmallSet;
use crate::hint::unlikely;
use crate::values::Value;
use crate::values::layout::pointer::RawPointer;

/// Pop the stack on drop.
pub(crate) struct ReprStackGuard;

/// Pop the stack on drop.
pub(crate) struct JsonStackGuard;

impl Drop for ReprStackGuard {
    fn drop(&mut self) {
        REPR_STACK.with(|repr_stack| {
            let mut stack = Cell::take(repr_stack);
            let popped = stack.pop();
            debug_assert!(popped.is_some());
            repr_stack.set(stack);
        })
    }
}

impl Drop for JsonStackGuard {
    fn drop(&mut self) {
        JSON_STACK.with(|json_stack| {
            let mut stack = Cell::take(json_stack);
            let popped = stack.pop();
            debug_assert!(popped.is_some());
            json_stack.set(stack);
        })
    }
}

/// krm-catalog patch: values nested deeper than this are not turned into text or JSON. Each
/// level recurses on the native stack, and a list nested 100,000 times (a loop of `x = [x]`)
/// overflowed a 256 MiB stack in `json.encode`, which aborts the process.
pub(crate) const MAX_VALUE_DEPTH: usize = 1000;

/// krm-catalog patch: why a value was not pushed on the repr or JSON stack.
pub(crate) enum StackPushError {
    /// The value is already on the stack.
    Cycle,
    /// The stack already holds [`MAX_VALUE_DEPTH`] values.
    TooDeep,
}

/// krm-catalog patch: the error for a value nested deeper than [`MAX_VALUE_DEPTH`].
#[derive(Debug, thiserror::Error)]
#[error("value nested too deeply (more than {MAX_VALUE_DEPTH} levels)")]
pub(crate) struct ValueTooDeep;

thread_local! {
    /// krm-catalog patch: set when `repr` met a value nested too deeply (it cannot fail, so it
    /// writes `...` there); `str()` and `repr()` take it and fail.
    static REPR_TOO_DEEP: Cell<bool> = const { Cell::new(false) };
}

/// krm-catalog patch: note that `repr` cut a value nested too deeply.
pub(crate) fn set_repr_too_deep() {
    REPR_TOO_DEEP.with(|flag| flag.set(true));
}

/// krm-catalog patch: whether `repr` cut a value since the last call, clearing the note.
pub(crate) fn take_repr_too_deep() -> Result<(), ValueTooDeep> {
    if REPR_TOO_DEEP.with(|flag| flag.replace(false)) {
        Err(ValueTooDeep)
    } else {
        Ok(())
    }
}

thread_local! {
    static REPR_STACK: Cell<SmallSet<RawPointer>> = const { Cell::new(SmallSet::new()) };
}

thread_local! {
    static JSON_STACK: Cell<SmallSet<RawPointer>> = const { Cell::new(SmallSet::new()) };
}

/// Push a value to the stack, return error if it is already on the stack.
/// krm-catalog patch: error `TooDeep` when [`MAX_VALUE_DEPTH`] values are on the stack.
pub(crate) fn repr_stack_push(value: Value) -> Result<ReprStackGuard, StackPushError> {
    REPR_STACK.with(|repr_stack| {
        let mut stack = Cell::take(repr_stack);
        if unlikely(stack.len() >= MAX_VALUE_DEPTH) {
            repr_stack.set(stack);
            Err(StackPushError::TooDeep)
        } else if unlikely(!stack.insert(value.ptr_value())) {
            repr_stack.set(stack);
            Err(StackPushError::Cycle)
        } else {
            repr_stack.set(stack);
            Ok(ReprStackGuard)
        }
    })
}

/// Push a value to the stack, return error if it is already on the stack.
/// krm-catalog patch: error `TooDeep` when [`MAX_VALUE_DEPTH`] values are on the stack.
pub(crate) fn json_stack_push(value: Value) -> Result<JsonStackGuard, StackPushError> {
    JSON_STACK.with(|json_stack| {
        let mut stack = Cell::take(json_stack);
        if unlikely(stack.len() >= MAX_VALUE_DEPTH) {
            json_stack.set(stack);
            Err(StackPushError::TooDeep)
        } else if unlikely(!stack.insert(value.ptr_value())) {
            json_stack.set(stack);
            Err(StackPushError::Cycle)
        } else {
            json_stack.set(stack);
            Ok(JsonStackGuard)
        }
    })
}
