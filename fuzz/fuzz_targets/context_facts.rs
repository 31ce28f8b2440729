#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| prime_compaction_fuzz::bodies::context_facts(data));
