// Package jsonld reads and writes the ns@v2 JSON-LD files of the file and
// object-store nameservices, and reads Fluree JSON-LD connection configs.
//
// Decode reads one file of any ns@v2 dialect by the vocabulary
// https://ns.flur.ee/db#, whatever prefix, full IRIs or @vocab spell it;
// Assemble merges the files of one record into a model.Record. Encode
// writes one file deterministically in a Dialect (Spec or FlureeV4),
// losslessly: given the file it replaces, members it does not know are
// written back unchanged, and a member whose value did not change keeps
// its bytes.
//
// docs/format.md describes every key, default and merge rule.
package jsonld

// Vocab is the ns@v2 vocabulary.
const Vocab = "https://ns.flur.ee/db#"

// ModelPrefix is the prefix of vocabulary IRIs in the model: a graph source
// of type https://ns.flur.ee/db#Bm25Index has source_type "db:Bm25Index",
// whatever prefix its file used.
const ModelPrefix = "db"
