package printers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// objectMetaDoc holds the field descriptions upstream reuses for the Name
// and Age columns of every kind.
var objectMetaDoc = metav1.ObjectMeta{}.SwaggerDoc()

// Descriptions upstream writes by hand for the workload columns.
const (
	containersDoc = "Names of each container in the template."
	imagesDoc     = "Images referenced by each container in the template."
)

// Column types, as the Table API names them.
const (
	typeString  = "string"
	typeInteger = "integer"
	typeBoolean = "boolean"
	typeDate    = "date"
)

// col is a column shown by plain `kubectl get`.
func col(name, typ, description string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ, Description: description}
}

// wide is a column shown only by `kubectl get -o wide`.
func wide(name, typ, description string) metav1.TableColumnDefinition {
	c := col(name, typ, description)
	c.Priority = 1
	return c
}

// nameCol is the object name column every kind starts with.
func nameCol() metav1.TableColumnDefinition {
	return asName(col("Name", typeString, objectMetaDoc["name"]))
}

// ageCol is the time-since-creation column.
func ageCol() metav1.TableColumnDefinition {
	return col("Age", typeString, objectMetaDoc["creationTimestamp"])
}

// columns lists column definitions; it exists so printer tables read as one
// expression per kind.
func columns(cs ...metav1.TableColumnDefinition) []metav1.TableColumnDefinition {
	return cs
}

// asName marks a column as holding object names, as upstream does for a few
// columns besides the first.
func asName(c metav1.TableColumnDefinition) metav1.TableColumnDefinition {
	c.Format = "name"
	return c
}
