//! Walking the records of a v2 batch in place.
