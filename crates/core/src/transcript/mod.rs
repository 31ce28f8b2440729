//! The text a summarizer reads: which agent messages reach the model
//! ([`convert_to_llm`]), the message model they become ([`llm_message`]) over
//! a text type that may borrow the caller's strings ([`text`]), the decoder
//! of the flat form the JS side hands messages over in ([`flat`]), the
//! recipe a transcript goes back to JS as ([`recipe`]) unless it is
//! written whole ([`output_form`]), the writer of
//! each transcript line ([`serialize`]), and the transcript of a session file
//! ([`from_file`]).

pub mod convert_to_llm;
pub mod flat;
pub mod from_file;
pub mod llm_message;
pub mod output_form;
pub mod recipe;
pub mod serialize;
pub mod text;
