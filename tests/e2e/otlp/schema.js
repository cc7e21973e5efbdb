// SPDX-License-Identifier: Apache-2.0
//
// The receiver's own copy of the OTLP profiles schema (opentelemetry-proto
// 1.10 / 1.11 field numbers), written for the tests independently of
// proto/*.proto: a wrong field number in the agent's schema shows up here as
// a decoding mismatch instead of being shared by both ends. Only what the
// tests look at is declared; protobufjs skips the rest.
'use strict';
const protobuf = require('protobufjs');

const text = `
syntax = "proto3";
package otlp;
message AnyValue {
  oneof value {
    string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4;
    bytes bytes_value = 7; int32 string_value_strindex = 8;
  }
}
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; }
message Scope { string name = 1; string version = 2; }
message ValueType { int32 type_strindex = 1; int32 unit_strindex = 2; }
message Sample {
  int32 stack_index = 1; repeated int32 attribute_indices = 2; int32 link_index = 3;
  repeated int64 values = 4; repeated fixed64 timestamps_unix_nano = 5;
}
message Profile {
  ValueType sample_type = 1; repeated Sample samples = 2; fixed64 time_unix_nano = 3;
  uint64 duration_nano = 4; ValueType period_type = 5; int64 period = 6; bytes profile_id = 7;
  repeated int32 attribute_indices = 11;
}
message ScopeProfiles { Scope scope = 1; repeated Profile profiles = 2; string schema_url = 3; }
message ResourceProfiles {
  Resource resource = 1; repeated ScopeProfiles scope_profiles = 2; string schema_url = 3;
}
message Mapping {
  uint64 memory_start = 1; uint64 memory_limit = 2; uint64 file_offset = 3;
  int32 filename_strindex = 4; repeated int32 attribute_indices = 5;
}
message Line { int32 function_index = 1; int64 line = 2; int64 column = 3; }
message Location {
  int32 mapping_index = 1; uint64 address = 2; repeated Line lines = 3;
  repeated int32 attribute_indices = 4;
}
message Function {
  int32 name_strindex = 1; int32 system_name_strindex = 2; int32 filename_strindex = 3;
  int64 start_line = 4;
}
message Link { bytes trace_id = 1; bytes span_id = 2; }
message KeyValueAndUnit { int32 key_strindex = 1; AnyValue value = 2; int32 unit_strindex = 3; }
message Stack { repeated int32 location_indices = 1; }
message ProfilesDictionary {
  repeated Mapping mapping_table = 1; repeated Location location_table = 2;
  repeated Function function_table = 3; repeated Link link_table = 4;
  repeated string string_table = 5; repeated KeyValueAndUnit attribute_table = 6;
  repeated Stack stack_table = 7;
}
message ExportProfilesServiceRequest {
  repeated ResourceProfiles resource_profiles = 1; ProfilesDictionary dictionary = 2;
}
`;

const root = protobuf.parse(text, { keepCase: true }).root;
const Request = root.lookupType('otlp.ExportProfilesServiceRequest');

// Decodes request bytes into plain objects: 64-bit integers as decimal
// strings, bytes as hex, empty repeated fields and unset scalars present.
function decodeRequest(buf) {
  const msg = Request.decode(buf);
  return Request.toObject(msg, { longs: String, bytes: Buffer, defaults: true, arrays: true,
                                 oneofs: true });
}

module.exports = { decodeRequest };
